// Event files: CRC-32C against published check values, and the records read
// back by a small decoder here. That decoder shares our reading of the format,
// so the check that counts is tests/interop/tensorboard_reader.py, which reads
// the files with TensorBoard's own code.
#include "io/event_writer.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <vector>

#include "base/options.hpp"
#include "io/crc32c.hpp"

namespace drun::io {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "drun_event_XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

uint64_t little_endian(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(s[at + i]);
  return v;
}

// Splits a TFRecord file into its records, checking both CRCs of each.
std::vector<std::string> read_records(const std::string& file) {
  std::vector<std::string> records;
  size_t at = 0;
  while (at < file.size()) {
    EXPECT_GE(file.size() - at, 12u) << "truncated header";
    const uint64_t length = little_endian(file, at, 8);
    EXPECT_EQ(little_endian(file, at + 8, 4), masked_crc32c(file.data() + at, 8));
    at += 12;
    EXPECT_GE(file.size() - at, length + 4) << "truncated record";
    records.push_back(file.substr(at, length));
    EXPECT_EQ(little_endian(file, at + length, 4), masked_crc32c(file.data() + at, length));
    at += length + 4;
  }
  return records;
}

// A protobuf message as field number -> raw values (varints as numbers,
// fixed-width as their bits, length-delimited as bytes).
struct Field {
  uint64_t number = 0;
  std::string bytes;
};
using Message = std::multimap<int, Field>;

uint64_t varint(const std::string& s, size_t& at) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    const auto b = static_cast<unsigned char>(s.at(at++));
    v |= uint64_t(b & 0x7F) << shift;
    if (!(b & 0x80)) return v;
  }
}

Message parse(const std::string& s) {
  Message m;
  size_t at = 0;
  while (at < s.size()) {
    const uint64_t key = varint(s, at);
    Field f;
    switch (key & 7) {
      case 0:
        f.number = varint(s, at);
        break;
      case 1:
        f.number = little_endian(s, at, 8);
        at += 8;
        break;
      case 5:
        f.number = little_endian(s, at, 4);
        at += 4;
        break;
      case 2: {
        const uint64_t n = varint(s, at);
        f.bytes = s.substr(at, n);
        at += n;
        break;
      }
      default:
        ADD_FAILURE() << "wire type " << (key & 7);
        return m;
    }
    m.emplace(int(key >> 3), f);
  }
  return m;
}

double as_double(const Field& f) {
  return std::bit_cast<double>(f.number);
}
float as_float(const Field& f) {
  return std::bit_cast<float>(uint32_t(f.number));
}

std::vector<double> packed_doubles(const std::string& s) {
  std::vector<double> v;
  for (size_t at = 0; at + 8 <= s.size(); at += 8)
    v.push_back(std::bit_cast<double>(little_endian(s, at, 8)));
  return v;
}

// The one Summary.Value of an event.
Message value_of(const Message& event) {
  EXPECT_EQ(event.count(5), 1u);
  const Message summary = parse(event.find(5)->second.bytes);
  EXPECT_EQ(summary.count(1), 1u);
  return parse(summary.find(1)->second.bytes);
}

TEST(Crc32c, MatchesPublishedCheckValues) {
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c("", 0), 0u);
  const std::vector<char> zeros(32, 0);  // RFC 3720, B.4
  EXPECT_EQ(crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
}

TEST(Crc32c, MaskedAsTFRecordStoresIt) {
  // Values from TensorBoard's own masked_crc32c.
  EXPECT_EQ(masked_crc32c("123456789", 9), 0xC78AB0E5u);
  const uint64_t zero_length = 0;
  EXPECT_EQ(masked_crc32c(&zero_length, 8), 0x07980329u);
}

TEST(EventWriter, WritesVersionThenScalarsThatReadBack) {
  TempDir dir;
  const std::string run = (dir.path() / "train" / "eval").string();  // made as needed
  EventWriter w(run);
  EXPECT_EQ(fs::path(w.path()).parent_path(), fs::path(run));
  const std::string name = fs::path(w.path()).filename().string();
  EXPECT_EQ(name.rfind("events.out.tfevents.", 0), 0u) << name;
  const std::string pid_suffix = std::string(".").append(std::to_string(::getpid())).append(".drun");
  EXPECT_TRUE(name.ends_with(pid_suffix)) << name;

  w.scalar("loss", 7, 0.25);
  w.scalar("metrics/accuracy", 1LL << 40, 0.1);
  w.flush();  // the writer stays open: a reader must see the records already
  const std::vector<std::string> records = read_records(read_file(w.path()));
  ASSERT_EQ(records.size(), 3u);

  const Message first = parse(records[0]);
  ASSERT_EQ(first.count(3), 1u);
  EXPECT_EQ(first.find(3)->second.bytes, "brain.Event:2");
  EXPECT_GT(as_double(first.find(1)->second), 1.5e9);  // wall time in seconds

  const Message loss = parse(records[1]);
  EXPECT_EQ(loss.find(2)->second.number, 7u);
  EXPECT_GE(as_double(loss.find(1)->second), as_double(first.find(1)->second));
  const Message loss_value = value_of(loss);
  EXPECT_EQ(loss_value.find(1)->second.bytes, "loss");
  EXPECT_EQ(as_float(loss_value.find(2)->second), 0.25f);

  const Message acc = parse(records[2]);
  EXPECT_EQ(acc.find(2)->second.number, uint64_t(1) << 40);
  const Message acc_value = value_of(acc);
  EXPECT_EQ(acc_value.find(1)->second.bytes, "metrics/accuracy");
  EXPECT_EQ(as_float(acc_value.find(2)->second), 0.1f);
}

TEST(EventWriter, ASecondWriterInTheSameSecondGetsAFileOfItsOwn) {
  TempDir dir;
  EventWriter a(dir.path().string());
  EventWriter b(dir.path().string());
  EventWriter c(dir.path().string());
  EXPECT_NE(a.path(), b.path());
  EXPECT_NE(b.path(), c.path());
  a.scalar("loss", 1, 1.0);
  b.scalar("loss", 2, 2.0);
  a.flush();
  b.flush();
  EXPECT_EQ(read_records(read_file(a.path())).size(), 2u);
  EXPECT_EQ(read_records(read_file(b.path())).size(), 2u);
}

TEST(EventWriter, HistogramHoldsTheValuesInIncreasingBuckets) {
  TempDir dir;
  EventWriter w(dir.path().string());
  const std::vector<float> values = {-2.0f, -0.5f, 0.0f, 0.0f, 1e-13f, 3.0f, 3.0f};
  w.histogram("dense/kernel", 3, values);
  w.flush();
  const std::vector<std::string> records = read_records(read_file(w.path()));
  ASSERT_EQ(records.size(), 2u);
  const Message event = parse(records[1]);
  EXPECT_EQ(event.find(2)->second.number, 3u);
  const Message value = value_of(event);
  EXPECT_EQ(value.find(1)->second.bytes, "dense/kernel");
  ASSERT_EQ(value.count(5), 1u);
  const Message h = parse(value.find(5)->second.bytes);
  EXPECT_EQ(as_double(h.find(1)->second), -2.0);
  EXPECT_EQ(as_double(h.find(2)->second), 3.0);
  EXPECT_EQ(as_double(h.find(3)->second), 7.0);
  EXPECT_DOUBLE_EQ(as_double(h.find(4)->second), 3.5 + double(1e-13f));
  EXPECT_DOUBLE_EQ(as_double(h.find(5)->second), 4 + 0.25 + 18);

  const std::vector<double> limits = packed_doubles(h.find(6)->second.bytes);
  const std::vector<double> counts = packed_doubles(h.find(7)->second.bytes);
  ASSERT_EQ(limits.size(), counts.size());
  EXPECT_TRUE(std::is_sorted(limits.begin(), limits.end()));
  EXPECT_EQ(limits.back(), DBL_MAX);  // the last run of empty buckets ends there
  EXPECT_EQ(std::accumulate(counts.begin(), counts.end(), 0.0), 7.0);
  // Bucket i holds [limit(i-1), limit(i)): 0 and 1e-13 share [0, 1e-12).
  const auto zero_bucket = std::find(limits.begin(), limits.end(), 1e-12) - limits.begin();
  ASSERT_LT(zero_bucket, long(limits.size()));
  EXPECT_EQ(counts[zero_bucket], 3.0);  // 0, 0 and 1e-13
  // Runs of empty buckets were merged into one.
  for (size_t i = 1; i < counts.size(); ++i) EXPECT_FALSE(counts[i] == 0 && counts[i - 1] == 0);
}

TEST(EventWriter, RefusesNaNInAHistogramNamingTheTag) {
  TempDir dir;
  EventWriter w(dir.path().string());
  const std::vector<float> values = {1.0f, std::nanf("")};
  try {
    w.histogram("dense/kernel", 5, values);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("dense/kernel"), std::string::npos) << e.what();
  }
}

TEST(EventWriter, NamesThePathItCannotCreate) {
  TempDir dir;
  const fs::path file = dir.path() / "plain_file";
  std::ofstream(file) << "x";
  const std::string bad = (file / "run").string();  // a directory under a file
  try {
    EventWriter w(bad);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace drun::io
