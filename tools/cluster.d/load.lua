-- wrk script of tools/cluster: keyed load, one API key per wrk thread, counting the
-- answers each key got.
--
--   wrk -t3 ... -s load.lua URL -- KEYS_FILE KEYED_SECS PATH
--
-- KEYS_FILE holds one API key per line; thread i sends key i (so -t is the number of
-- keys). For KEYED_SECS seconds every request is PATH with the thread's key (one credit
-- per 200); after that, every request is /healthz (no key is metered on it), so that
-- when wrk stops and abandons its in-flight requests, none of them is a metered one:
-- every credit spent belongs to an answer this script saw.
--
-- An answer counts as a keyed 200 when it is a 200 carrying X-Credits-Remaining (only
-- metered answers do); a /healthz 200 counts apart; anything else is a failure, by
-- status. done() prints one line: CLUSTER {json}.

local threads = {}

function setup(thread)
  thread:set("index", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  local keys = {}
  for line in io.lines(args[1]) do
    if #line > 0 then table.insert(keys, line) end
  end
  key = keys[index]
  if key == nil then
    error("no key for thread " .. index .. " in " .. args[1])
  end
  deadline = os.time() + tonumber(args[2])
  path = args[3]
  ok = 0
  health = 0
  bad = 0
  statuses = ""
  wrk.headers["X-API-Key"] = key
end

function request()
  if os.time() < deadline then
    return wrk.format("GET", path)
  end
  return wrk.format("GET", "/healthz")
end

function response(status, headers, body)
  if status == 200 then
    if headers["x-credits-remaining"] ~= nil or headers["X-Credits-Remaining"] ~= nil then
      ok = ok + 1
    else
      health = health + 1
    end
  else
    bad = bad + 1
    -- The first few failures, for the report.
    if bad <= 20 then statuses = statuses .. status .. " " end
  end
end

function done(summary, latency, requests)
  local per = {}
  for _, t in ipairs(threads) do
    table.insert(per, string.format('{"index":%d,"ok":%d,"health":%d,"bad":%d,"statuses":"%s"}',
      t:get("index"), t:get("ok"), t:get("health"), t:get("bad"), t:get("statuses")))
  end
  local e = summary.errors
  io.write(string.format(
    'CLUSTER {"keys":[%s],"requests":%d,"duration_s":%.3f,"p50_us":%d,"p99_us":%d,"max_us":%d,' ..
    '"err_connect":%d,"err_read":%d,"err_write":%d,"err_status":%d,"err_timeout":%d}\n',
    table.concat(per, ","), summary.requests, summary.duration / 1e6,
    latency:percentile(50), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
