-- Atom feeds of every entry: /s/load-0/history.xml … /s/load-5999/history.xml.
counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", "/s/load-" .. (counter % 6000) .. "/history.xml")
end

-- PACE_MS=N makes each connection wait N ms after every answer: a fixed offered load
-- (connections / (N ms + latency)) instead of as fast as the server answers.
local pace = tonumber(os.getenv("PACE_MS") or "0")
if pace > 0 then
  delay = function() return pace end
end
