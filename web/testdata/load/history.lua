counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", "/s/bench-" .. (counter % 6000) .. "/history")
end
