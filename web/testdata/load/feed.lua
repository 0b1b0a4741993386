-- Atom feeds of every entry: /s/load-0/history.xml … /s/load-5999/history.xml.
counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", "/s/load-" .. (counter % 6000) .. "/history.xml")
end
