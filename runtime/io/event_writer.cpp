// Event files by hand: protobuf's wire format for the four messages TensorBoard
// needs (Event, Summary, Summary.Value, HistogramProto) and TFRecord framing.
// Field numbers are those of tensorboard/compat/proto/{event,summary}.proto.
#include "io/event_writer.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <vector>

#include "base/options.hpp"
#include "io/crc32c.hpp"

namespace drun::io {

namespace {

// Appends protobuf fields to a byte string. Fixed-width numbers go out little
// endian whatever the host (ppc64le is little endian, but the format says so).
class Proto {
 public:
  void varint_field(int field, uint64_t v) {
    key(field, 0);
    varint(v);
  }
  void double_field(int field, double v) {
    key(field, 1);
    fixed(std::bit_cast<uint64_t>(v), 8);
  }
  void float_field(int field, float v) {
    key(field, 5);
    fixed(std::bit_cast<uint32_t>(v), 4);
  }
  void bytes_field(int field, const std::string& s) {
    key(field, 2);
    varint(s.size());
    out_ += s;
  }
  // proto3 packs repeated numbers: one length-delimited run of fixed64s.
  void packed_doubles(int field, const std::vector<double>& v) {
    key(field, 2);
    varint(v.size() * 8);
    for (double d : v) fixed(std::bit_cast<uint64_t>(d), 8);
  }
  const std::string& bytes() const { return out_; }

 private:
  void key(int field, int wire_type) { varint(uint64_t(field) << 3 | wire_type); }
  void varint(uint64_t v) {
    for (; v >= 0x80; v >>= 7) out_ += char((v & 0x7F) | 0x80);
    out_ += char(v);
  }
  void fixed(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out_ += char(v >> (8 * i) & 0xFF);
  }
  std::string out_;
};

double now_seconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

// Event.wall_time = 1, step = 2, file_version = 3, summary = 5.
Proto event_header(int64_t step) {
  Proto event;
  event.double_field(1, now_seconds());
  event.varint_field(2, uint64_t(step));  // a negative int64 is its two's complement
  return event;
}

// Summary { repeated Value value = 1 }; Value.tag = 1, then the payload.
std::string summary_of(const Proto& value) {
  Proto summary;
  summary.bytes_field(1, value.bytes());
  return summary.bytes();
}

// TensorFlow's default histogram buckets (core/lib/histogram/histogram.cc):
// the multiplications are repeated in the same order so that the limits are
// the same doubles and TensorBoard can merge our histograms with TF's.
const std::vector<double>& default_bucket_limits() {
  static const std::vector<double> limits = [] {
    std::vector<double> positive;
    for (double v = 1.0e-12; v < 1.0e20; v *= 1.1) positive.push_back(v);
    positive.push_back(DBL_MAX);
    std::vector<double> all;
    all.reserve(2 * positive.size() + 1);
    for (auto it = positive.rbegin(); it != positive.rend(); ++it) all.push_back(-*it);
    all.push_back(0.0);
    all.insert(all.end(), positive.begin(), positive.end());
    return all;
  }();
  return limits;
}

}  // namespace

EventWriter::EventWriter(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw UsageError("cannot create event directory " + dir + ": " + ec.message());
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "localhost");
  const double wall_time = now_seconds();
  const std::string name = "events.out.tfevents." + std::to_string(int64_t(wall_time)) + "." +
                           host + "." + std::to_string(::getpid()) + ".drun";
  // Opened exclusively: a second writer in the same directory, process and
  // second (fit called twice) must not truncate the first one's file, so it
  // takes the name with ".1", ".2"..., which TensorBoard reads after it.
  for (int n = 0; !file_; ++n) {
    path_ = (std::filesystem::path(dir) / name).string();
    if (n > 0) path_ += fmt::format(".{}", n);
    file_.reset(std::fopen(path_.c_str(), "wbx"));
    if (!file_ && (errno != EEXIST || n == 1000))
      throw UsageError("cannot create event file " + path_ + ": " + std::strerror(errno));
  }
  Proto event;
  event.double_field(1, wall_time);
  event.bytes_field(3, "brain.Event:2");  // the version TensorBoard's reader expects
  write_record(event.bytes());
  flush();
}

EventWriter::~EventWriter() = default;
EventWriter::EventWriter(EventWriter&&) noexcept = default;
EventWriter& EventWriter::operator=(EventWriter&&) noexcept = default;

void EventWriter::scalar(const std::string& tag, int64_t step, double value) {
  Proto v;
  v.bytes_field(1, tag);
  v.float_field(2, float(value));  // simple_value
  Proto event = event_header(step);
  event.bytes_field(5, summary_of(v));
  write_record(event.bytes());
}

void EventWriter::histogram(const std::string& tag, int64_t step, std::span<const float> values) {
  const std::vector<double>& limits = default_bucket_limits();
  std::vector<double> counts(limits.size(), 0.0);
  // TensorFlow's starting values, kept for an empty histogram so it reads the same.
  double min = DBL_MAX, max = -DBL_MAX, sum = 0, sum_squares = 0;
  for (float f : values) {
    const double x = f;
    if (!std::isfinite(x))
      throw UsageError("histogram '" + tag + "' at step " + std::to_string(step) +
                       ": the values hold a NaN or infinity");
    // Bucket i holds [limit(i-1), limit(i)).
    counts[std::upper_bound(limits.begin(), limits.end(), x) - limits.begin()] += 1;
    min = std::min(min, x);
    max = std::max(max, x);
    sum += x;
    sum_squares += x * x;
  }
  // As TensorFlow's EncodeToProto: a run of empty buckets becomes one, so a
  // histogram costs a few hundred bytes rather than 12 KB per record.
  std::vector<double> out_limits, out_counts;
  for (size_t i = 0; i < counts.size();) {
    double end = limits[i], count = counts[i];
    ++i;
    if (count <= 0) {
      for (; i < counts.size() && counts[i] <= 0; ++i) end = limits[i], count = counts[i];
    }
    out_limits.push_back(end);
    out_counts.push_back(count);
  }
  Proto histo;  // HistogramProto: min 1, max 2, num 3, sum 4, sum_squares 5, limits 6, counts 7
  histo.double_field(1, min);
  histo.double_field(2, max);
  histo.double_field(3, double(values.size()));
  histo.double_field(4, sum);
  histo.double_field(5, sum_squares);
  histo.packed_doubles(6, out_limits);
  histo.packed_doubles(7, out_counts);
  Proto v;
  v.bytes_field(1, tag);
  v.bytes_field(5, histo.bytes());  // Summary.Value.histo
  Proto event = event_header(step);
  event.bytes_field(5, summary_of(v));
  write_record(event.bytes());
}

void EventWriter::flush() {
  if (std::fflush(file_.get()) != 0)
    throw UsageError("cannot write event file " + path_ + ": " + std::strerror(errno));
}

// TFRecord: uint64 length, masked CRC of those 8 bytes, data, masked CRC of data.
void EventWriter::write_record(const std::string& data) {
  unsigned char header[12];
  const uint64_t length = data.size();
  for (int i = 0; i < 8; ++i) header[i] = length >> (8 * i) & 0xFF;
  const uint32_t length_crc = masked_crc32c(header, 8);
  for (int i = 0; i < 4; ++i) header[8 + i] = length_crc >> (8 * i) & 0xFF;
  unsigned char footer[4];
  const uint32_t data_crc = masked_crc32c(data.data(), data.size());
  for (int i = 0; i < 4; ++i) footer[i] = data_crc >> (8 * i) & 0xFF;
  std::FILE* f = file_.get();
  if (std::fwrite(header, 1, sizeof header, f) != sizeof header ||
      std::fwrite(data.data(), 1, data.size(), f) != data.size() ||
      std::fwrite(footer, 1, sizeof footer, f) != sizeof footer)
    throw UsageError("cannot write event file " + path_ + ": " + std::strerror(errno));
}

}  // namespace drun::io
