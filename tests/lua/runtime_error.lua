-- A runtime error on line 4, called from the main chunk on line 7: drun must
-- name the file and line and print a stack traceback.
local function lookup(t)
  return t.a.b
end

lookup({})
