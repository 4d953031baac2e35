#include "data/numpy_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "base/options.hpp"
#include "tensor/half.hpp"

namespace drun::data {
namespace {

// A file mapped copy-on-write: readers see its pages, a stray write would
// copy a page rather than fault or change the file.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw UsageError("data.numpy: cannot open " + path + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      throw UsageError("data.numpy: " + path + " is not a regular file");
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > 0) {
      void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        ::close(fd);
        throw UsageError("data.numpy: cannot map " + path + ": " + std::strerror(errno));
      }
      data_ = static_cast<unsigned char*>(p);
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_) ::munmap(data_, size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  unsigned char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

struct Header {
  char order = '<';  // '<' little, '>' big, '|' not applicable
  char kind = 'f';   // 'f' float, 'i' signed, 'u' unsigned, 'b' bool
  int item_bytes = 4;
  std::vector<int64_t> shape;
  size_t data_offset = 0;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

uint32_t le(const unsigned char* p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// The value after `'key':` in the header's dict literal, up to the next
// top-level comma or the dict's end (a tuple's commas are inside parentheses).
std::string dict_value(const std::string& dict, const std::string& key, const std::string& where) {
  const size_t k = dict.find("'" + key + "'");
  if (k == std::string::npos) throw UsageError(where + ": its header has no '" + key + "'");
  size_t p = dict.find(':', k);
  if (p == std::string::npos) throw UsageError(where + ": its header is not a dict");
  ++p;
  int depth = 0;
  size_t e = p;
  for (; e < dict.size(); ++e) {
    const char ch = dict[e];
    if (ch == '(' || ch == '[') ++depth;
    if (ch == ')' || ch == ']') --depth;
    if (depth == 0 && (ch == ',' || ch == '}')) break;
    if (depth < 0) break;
  }
  std::string v = dict.substr(p, e - p);
  const size_t b = v.find_first_not_of(" \t"), z = v.find_last_not_of(" \t");
  return b == std::string::npos ? "" : v.substr(b, z - b + 1);
}

Header parse_header(const unsigned char* p, size_t size, const std::string& where) {
  static const unsigned char magic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (size < 10 || std::memcmp(p, magic, 6) != 0)
    throw UsageError(where + ": not a NumPy .npy array (no \\x93NUMPY magic)");
  const int major = p[6];
  if (major < 1 || major > 3)
    throw UsageError(where + ": .npy format version " + std::to_string(major) +
                     " is not supported (1 to 3 are)");
  const int len_bytes = major == 1 ? 2 : 4;
  const size_t start = 8 + static_cast<size_t>(len_bytes);
  if (size < start) throw UsageError(where + ": truncated .npy header");
  const size_t header_len = le(p + 8, len_bytes);
  if (size < start + header_len) throw UsageError(where + ": truncated .npy header");
  const std::string dict(reinterpret_cast<const char*>(p + start), header_len);

  Header h;
  h.data_offset = start + header_len;
  const std::string descr = dict_value(dict, "descr", where);
  if (descr.size() < 5 || descr.front() != '\'' || descr.back() != '\'')
    throw UsageError(where + ": element type " + descr +
                     " is not supported (structured arrays are not; plain numbers are)");
  h.order = descr[1];
  h.kind = descr[2];
  h.item_bytes = std::atoi(descr.substr(3, descr.size() - 4).c_str());
  if (h.order == '=') h.order = std::endian::native == std::endian::little ? '<' : '>';
  const bool known =
      (h.kind == 'f' && (h.item_bytes == 2 || h.item_bytes == 4 || h.item_bytes == 8)) ||
      ((h.kind == 'i' || h.kind == 'u') &&
       (h.item_bytes == 1 || h.item_bytes == 2 || h.item_bytes == 4 || h.item_bytes == 8)) ||
      (h.kind == 'b' && h.item_bytes == 1);
  if (!known || (h.order != '<' && h.order != '>' && h.order != '|'))
    throw UsageError(where + ": element type " + descr +
                     " is not supported (bool, int8..64, uint8..64, float16/32/64 are)");
  if (dict_value(dict, "fortran_order", where) != "False")
    throw UsageError(where +
                     ": the array is in Fortran order; save it in C order "
                     "(numpy.ascontiguousarray) to read it");
  const std::string shape = dict_value(dict, "shape", where);
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')')
    throw UsageError(where + ": its header's shape " + shape + " is not a tuple");
  for (size_t i = 1; i + 1 < shape.size();) {
    while (i + 1 < shape.size() && (shape[i] == ' ' || shape[i] == ',')) ++i;
    if (i + 1 >= shape.size()) break;
    char* end = nullptr;
    const long long d = std::strtoll(shape.c_str() + i, &end, 10);
    if (end == shape.c_str() + i || d < 0)
      throw UsageError(where + ": its header's shape " + shape + " is not a tuple of sizes");
    h.shape.push_back(d);
    i = static_cast<size_t>(end - shape.c_str());
  }
  if (h.shape.size() > static_cast<size_t>(Shape::kMaxRank))
    throw UsageError(where + ": rank " + std::to_string(h.shape.size()) + " is more than " +
                     std::to_string(Shape::kMaxRank) + " dimensions");
  return h;
}

// One element as double (exact for every supported type but int64/uint64
// beyond 2^53, which no data set of class ids or pixels reaches).
double element(const Header& h, const unsigned char* p) {
  unsigned char b[8];
  for (int i = 0; i < h.item_bytes; ++i)  // to little-endian
    b[i] = h.order == '>' ? p[h.item_bytes - 1 - i] : p[i];
  uint64_t u = 0;
  for (int i = h.item_bytes - 1; i >= 0; --i) u = (u << 8) | b[i];
  switch (h.kind) {
    case 'b':
      return u != 0 ? 1.0 : 0.0;
    case 'u':
      return static_cast<double>(u);
    case 'i': {
      const int bits = 8 * h.item_bytes;
      const int64_t s = bits == 64 ? static_cast<int64_t>(u)
                                   : static_cast<int64_t>(u << (64 - bits)) >> (64 - bits);
      return static_cast<double>(s);
    }
    default:
      if (h.item_bytes == 2) return half_to_float(static_cast<uint16_t>(u));
      if (h.item_bytes == 4) return std::bit_cast<float>(static_cast<uint32_t>(u));
      return std::bit_cast<double>(u);
  }
}

Shape shape_of(const Header& h) {
  return Shape(std::vector<int64_t>(h.shape.begin(), h.shape.end()));
}

// The array from bytes that `keeper` keeps alive (a mapped file) or that are
// copied out (keeper null: an inflated .npz member).
Tensor array_from(const unsigned char* bytes, size_t size,
                  const std::shared_ptr<MappedFile>& keeper, NumpyAs want,
                  const std::string& where) {
  const Header h = parse_header(bytes, size, where);
  const int64_t n = h.numel();
  const size_t need = static_cast<size_t>(n) * static_cast<size_t>(h.item_bytes);
  if (size - h.data_offset < need)
    throw UsageError(where + ": truncated: its header's shape needs " + std::to_string(need) +
                     " bytes of data, the file holds " + std::to_string(size - h.data_offset));
  const unsigned char* data = bytes + h.data_offset;
  DType as = DType::f32;
  if (want == NumpyAs::class_ids && h.kind != 'f') as = DType::i32;
  if (want == NumpyAs::pixels && h.kind == 'u' && h.item_bytes == 1) as = DType::u8;
  // Used where it lies: bytes, and float32 in this machine's byte order.
  const bool float_in_place = as == DType::f32 && h.kind == 'f' && h.item_bytes == 4 &&
                              h.order == '<' && std::endian::native == std::endian::little &&
                              reinterpret_cast<uintptr_t>(data) % alignof(float) == 0;
  if (keeper && (float_in_place || as == DType::u8))
    return Tensor::kept_alive_by(keeper, const_cast<unsigned char*>(data), shape_of(h), as);
  Tensor t(shape_of(h), as);
  for (int64_t i = 0; i < n; ++i) {
    const double v = element(h, data + i * h.item_bytes);
    if (as == DType::f32) {
      t.f32()[i] = static_cast<float>(v);
    } else if (as == DType::u8) {
      t.u8()[i] = static_cast<uint8_t>(v);
    } else {
      if (v < -2147483648.0 || v > 2147483647.0)
        throw UsageError(where + ": value " + std::to_string(v) + " of element " +
                         std::to_string(i) + " does not fit a 32-bit class id");
      t.i32()[i] = static_cast<int32_t>(v);
    }
  }
  return t;
}

using ZipArchive = std::unique_ptr<zip_t, decltype(&zip_discard)>;
using ZipFile = std::unique_ptr<zip_file_t, decltype(&zip_fclose)>;

std::vector<unsigned char> read_member(const std::string& path, const std::string& member) {
  int err = 0;
  ZipArchive za(zip_open(path.c_str(), ZIP_RDONLY, &err), &zip_discard);
  if (!za) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, err);
    const std::string why = zip_error_strerror(&ze);
    zip_error_fini(&ze);
    throw UsageError("data.numpy: cannot read " + path + " as an .npz (zip) file: " + why);
  }
  std::string name = member;
  zip_int64_t index = zip_name_locate(za.get(), name.c_str(), 0);
  if (index < 0 && name.find(".npy") == std::string::npos) {
    name += ".npy";
    index = zip_name_locate(za.get(), name.c_str(), 0);
  }
  if (index < 0) {
    std::string names;
    const zip_int64_t count = zip_get_num_entries(za.get(), 0);
    for (zip_int64_t i = 0; i < count; ++i) {
      std::string e = zip_get_name(za.get(), static_cast<zip_uint64_t>(i), 0);
      if (e.size() > 4 && e.ends_with(".npy")) e.resize(e.size() - 4);
      names += (names.empty() ? "" : ", ") + e;
    }
    throw UsageError("data.numpy: " + path + " has no member '" + member + "'; it has: " + names);
  }
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(za.get(), static_cast<zip_uint64_t>(index), 0, &st) != 0 ||
      !(st.valid & ZIP_STAT_SIZE))
    throw UsageError("data.numpy: " + path + ": cannot read member '" + name + "'");
  ZipFile f(zip_fopen_index(za.get(), static_cast<zip_uint64_t>(index), 0), &zip_fclose);
  if (!f) throw UsageError("data.numpy: " + path + ": cannot open member '" + name + "'");
  std::vector<unsigned char> bytes(static_cast<size_t>(st.size));
  if (zip_fread(f.get(), bytes.data(), st.size) != static_cast<zip_int64_t>(st.size))
    throw UsageError("data.numpy: " + path + ": member '" + name + "' is corrupt");
  return bytes;
}

}  // namespace

Tensor read_numpy_array(const std::string& path, const std::string& member, NumpyAs as) {
  if (member.empty()) {
    auto mapped = std::make_shared<MappedFile>(path);
    return array_from(mapped->data(), mapped->size(), mapped, as, "data.numpy: " + path);
  }
  const std::vector<unsigned char> bytes = read_member(path, member);
  return array_from(bytes.data(), bytes.size(), nullptr, as,
                    "data.numpy: " + path + " member '" + member + "'");
}

}  // namespace drun::data
