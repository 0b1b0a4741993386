-- The directory's feed, /changes.xml (the 50 newest changes).
request = function()
  return wrk.format("GET", "/changes.xml")
end

-- PACE_MS=N makes each connection wait N ms after every answer: a fixed offered load
-- (connections / (N ms + latency)) instead of as fast as the server answers.
local pace = tonumber(os.getenv("PACE_MS") or "0")
if pace > 0 then
  delay = function() return pace end
end
