-- Directory pages with issue 16's orders and filters: each request one of the orders
-- (name, last change, findings, uptime) or filters (has findings, a protocol version,
-- offline, changed in the last 7 days), on pages 1 … 10 of it.
local variants = {
  "sort=name", "sort=change", "sort=findings", "sort=uptime",
  "findings=1", "protocol=2025-06-18", "offline=1", "changed=7d",
}
counter = 0
request = function()
  counter = counter + 1
  local v = variants[counter % #variants + 1]
  local page = math.floor(counter / #variants) % 10 + 1
  return wrk.format("GET", "/?" .. v .. "&page=" .. page)
end

-- PACE_MS=N makes each connection wait N ms after every answer: a fixed offered load
-- (connections / (N ms + latency)) instead of as fast as the server answers.
local pace = tonumber(os.getenv("PACE_MS") or "0")
if pace > 0 then
  delay = function() return pace end
end
