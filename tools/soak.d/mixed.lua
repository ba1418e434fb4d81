-- wrk script of tools/soak's well-behaved traffic: each request carries the next key of
-- the file named by LOADTEST_KEYS and the next of a mix of the API's read endpoints,
-- weighted as a price dashboard asks them (mostly cheapest and prices, some registrars,
-- overview, history, the catalogue, a day in the past, the website's TLD page), and
-- every 16th request a small portfolio audit (POST). Formatted once at start; the
-- closing line is report.lua's.
local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)") or "./"
dofile(here .. "../loadtest.d/report.lua")
local mix = {
  {"GET", "/api/v1/client/prices/cheapest?tlds=com,net,org&limit=5"},
  {"GET", "/api/v1/client/prices/cheapest?tlds=com&limit=5"},
  {"GET", "/api/v1/client/prices?tlds=com,net,org&registrars=porkbun,cloudflare"},
  {"GET", "/api/v1/client/prices/cheapest?tlds=io,ai,dev,app&limit=3"},
  {"GET", "/api/v1/client/registrars/tld/com?include_prices=true"},
  {"GET", "/api/v1/client/prices/cheapest?tlds=xyz&limit=5"},
  {"GET", "/api/v1/client/overview/tld/net"},
  {"GET", "/api/v1/client/prices/cheapest?tlds=org&limit=5"},
  {"GET", "/api/v1/client/history/tld/org"},
  {"GET", "/api/v1/client/prices/cheapest?tlds=com,net,org&limit=5"},
  {"GET", "/api/v1/client/tlds?type=generic&limit=50"},
  {"GET", "/api/v1/client/prices/cheapest?tlds=com&limit=5&at=2025-06-01"},
  {"GET", "/api/v1/registrars"},
  {"GET", "/api/v1/client/prices?tlds=com,net,org&registrars=porkbun,cloudflare"},
  {"GET", "/tld/com"},
  {"POST", "/api/v1/client/portfolio/audit",
   '{"domains":[{"name":"example.com","registrar":"namecheap"},{"name":"example.org"}]}'},
}
local requests, n, i = {}, 0, 0

function init(args)
  local k = 0
  for key in io.lines(os.getenv("LOADTEST_KEYS")) do
    if key ~= "" then
      k = k + 1
      local m = mix[(k - 1) % #mix + 1]
      local headers = { ["X-API-Key"] = key }
      if m[3] then headers["Content-Type"] = "application/json" end
      n = n + 1
      requests[n] = wrk.format(m[1], m[2], headers, m[3])
    end
  end
  i = math.random(n) - 1
end

function request()
  i = i % n + 1
  return requests[i]
end
