-- The benchmark scripts' one-line JSON reports: a string literal (nil is
-- null). Control characters, quotes and backslashes become \u escapes; the
-- GPU's name and the precision are the only free text the reports carry.
local M = {}

function M.string(s)
  if s == nil then return 'null' end
  return '"' .. tostring(s):gsub('[%c"\\]', function(c) return string.format('\\u%04x', c:byte()) end) .. '"'
end

return M
