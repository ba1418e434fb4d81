-- wrk script of tools/loadtest for POST scenarios: the body comes from the file named by
-- the environment variable LOADTEST_BODY (read once, at start), the content type from
-- LOADTEST_CONTENT_TYPE; the closing line is report.lua's.
local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)") or "./"
dofile(here .. "report.lua")
local f = assert(io.open(os.getenv("LOADTEST_BODY"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = os.getenv("LOADTEST_CONTENT_TYPE") or "application/json"
