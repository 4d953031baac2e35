// The data readers, one DRUN_READER line each: DRUN_READER(id) is the reader
// whose file defines `const ReaderInfo& id_reader()` (data/reader_registry.hpp):
// its name (drun.data.NAME), its options with their types, defaults and
// descriptions, and how it opens a data set from them. open_reader, Lua's
// drun.data constructors, the unknown-option messages and the API docs lint
// come from here.
// Adding a reader means: its file (data/<reader>.cpp, with its entry, listed
// in data/meson.build), its line here, its test and its docs row.
//
// No include guard: define DRUN_READER, include this file, undefine DRUN_READER.
DRUN_READER(fashion_mnist)
DRUN_READER(idx)
DRUN_READER(numpy)
DRUN_READER(hdf5)
DRUN_READER(cifar10)
DRUN_READER(csv)
DRUN_READER(image_folder)
DRUN_READER(arrays)
DRUN_READER(text)
