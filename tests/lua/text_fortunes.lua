-- drun.data.text on Debian's fortunes (tools/bootstrap installs them): the
-- folder's text files, characters as ids, the last tenth held out. Prints
-- what a character model's script sizes itself by.
local drun = require 'drun'

local options = {path = '/usr/share/games/fortunes', sequence_length = 100, vocabulary = 'chars',
                 validation_split = 0.1, subset = 'training'}
local train = drun.data.text(options)
options.subset = 'validation'
local val = drun.data.text(options)
local info = train:info()
print(string.format('files %d bytes %d vocabulary %d train %d validation %d', info.files,
                    info.bytes + val:info().bytes, info.vocabulary_size, train:size(), val:size()))
