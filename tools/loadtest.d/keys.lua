-- wrk script of tools/loadtest for the key-population scenario: each request
-- carries the next key of the file named by LOADTEST_KEYS (one raw key per line), in
-- turn. The requests are formatted once at start, so that per request wrk only picks
-- the next string: with one key or 10,000 it runs the same code. It still reads 10,000
-- different strings instead of one, which costs the rig ~2% (sent to hyperct, which
-- ignores the key, the 10,000-key stream ran at ~0.98x): tools/loadtest sends both
-- streams to hyperct too, as a control. The closing line is report.lua's.
local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)") or "./"
dofile(here .. "report.lua")
local requests, n, i = {}, 0, 0

function init(args)
  -- Each wrk thread starts at its own place in the list.
  for key in io.lines(os.getenv("LOADTEST_KEYS")) do
    if key ~= "" then
      n = n + 1
      requests[n] = wrk.format(nil, nil, { ["X-API-Key"] = key })
    end
  end
  i = math.random(n) - 1
end

function request()
  i = i % n + 1
  return requests[i]
end
