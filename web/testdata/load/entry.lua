-- Entry pages of every entry of probity_bench_web_v1: load-0 … load-5999 (remote
-- endpoints, then npm and PyPI packages).
counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", "/s/load-" .. (counter % 6000))
end

-- PACE_MS=N makes each connection wait N ms after every answer: a fixed offered load
-- (connections / (N ms + latency)) instead of as fast as the server answers.
local pace = tonumber(os.getenv("PACE_MS") or "0")
if pace > 0 then
  delay = function() return pace end
end
