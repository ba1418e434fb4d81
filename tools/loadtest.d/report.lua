-- wrk script of tools/loadtest: prints one machine-readable line when the run ends,
-- with the percentiles wrk's own summary leaves out (p99.9) and every error counter.
-- Request headers come from wrk's -H flags; nothing here runs per request, so the
-- script costs the load generator nothing.
function done(summary, latency, requests)
  local e = summary.errors
  local secs = summary.duration / 1e6
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_s":%.3f,"bytes":%d,"rps":%.1f,' ..
    '"p50_us":%d,"p99_us":%d,"p999_us":%d,"max_us":%d,"mean_us":%.1f,' ..
    '"err_connect":%d,"err_read":%d,"err_write":%d,"err_status":%d,"err_timeout":%d}\n',
    summary.requests, secs, summary.bytes, summary.requests / secs,
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9),
    latency.max, latency.mean,
    e.connect, e.read, e.write, e.status, e.timeout))
end
