-- Directory pages: /?page=1 … /?page=60 (100 entries a page), without filters.
counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", "/?page=" .. (counter % 60 + 1))
end

-- PACE_MS=N makes each connection wait N ms after every answer: a fixed offered load
-- (connections / (N ms + latency)) instead of as fast as the server answers.
local pace = tonumber(os.getenv("PACE_MS") or "0")
if pace > 0 then
  delay = function() return pace end
end
