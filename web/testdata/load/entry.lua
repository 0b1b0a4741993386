-- Entry pages of every entry of probity_bench_web_v1: load-0 … load-5999 (remote
-- endpoints, then npm and PyPI packages).
counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", "/s/load-" .. (counter % 6000))
end
