-- A syntax error on line 3: drun must name the file and the line.
local x = 1
local y = = 2
return x + y
