-- GET one of many paths, in turn: the paths are read from the file named
-- by WRK_PATHS (one per line), so a load spreads over them (issue 42: the
-- status reads of 200 sandboxes).
dofile("perf/wrk/report.lua")

local paths = {}
for line in io.lines(os.getenv("WRK_PATHS")) do
  if line ~= "" then
    paths[#paths + 1] = line
  end
end
local n = 0

function request()
  n = n + 1
  return wrk.format("GET", paths[(n % #paths) + 1])
end
