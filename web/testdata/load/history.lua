-- History pages of the remote entries, load-0 … load-5399. Every tenth request is
-- page 2 of one of the 30 entries with more than 100 changes (load-7, load-187, …,
-- load-5227: i % 180 == 7), so that paging is measured too.
counter = 0
request = function()
  counter = counter + 1
  if counter % 10 == 0 then
    local k = math.floor(counter / 10) % 30
    return wrk.format("GET", "/s/load-" .. (7 + 180 * k) .. "/history?page=2")
  end
  return wrk.format("GET", "/s/load-" .. (counter % 5400) .. "/history")
end

-- PACE_MS=N makes each connection wait N ms after every answer: a fixed offered load
-- (connections / (N ms + latency)) instead of as fast as the server answers.
local pace = tonumber(os.getenv("PACE_MS") or "0")
if pace > 0 then
  delay = function() return pace end
end
