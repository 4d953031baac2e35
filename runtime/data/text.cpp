#include "data/text.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "data/reader_registry.hpp"

namespace drun::data {

namespace {

namespace fs = std::filesystem;

std::string read_file(const std::string& path, const std::string& who) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(who + ": " + path + ": cannot open (no such file, or not readable)");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw UsageError(who + ": " + path + ": read error");
  return bytes;
}

// A folder's files in name order, so that the text (and its split) is the
// same on every machine. Links are skipped: Debian's fortunes link each file
// as NAME.u8, which would read it twice.
std::vector<std::string> folder_files(const fs::path& dir) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (!e.is_symlink() && e.is_regular_file()) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

struct Corpus {
  std::string text;
  int64_t files = 0;
};

Corpus read_corpus(const std::vector<std::string>& paths, const std::string& who) {
  Corpus c;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (const auto& f : folder_files(p)) {
        std::string bytes = read_file(f, who);
        if (bytes.find('\0') != std::string::npos) continue;  // not text
        c.text += bytes;
        ++c.files;
      }
    } else {
      c.text += read_file(p, who);
      ++c.files;
    }
  }
  return c;
}

}  // namespace

Dataset read_text(const TextOptions& o, const std::string& who) {
  if (o.paths.empty()) throw UsageError(who + ": path names no file");
  if (o.sequence_length <= 0)
    throw UsageError(who + ": sequence_length must be > 0, got " +
                     std::to_string(o.sequence_length));
  const int64_t stride = o.stride == 0 ? o.sequence_length : o.stride;
  if (stride <= 0) throw UsageError(who + ": stride must be > 0, got " + std::to_string(o.stride));
  if (!(o.validation_split >= 0 && o.validation_split < 1))
    throw UsageError(who + ": validation_split must be in [0, 1), got " +
                     std::to_string(o.validation_split));
  if (o.subset != TextSubset::all && o.validation_split == 0)
    throw UsageError(who + ": subset needs a validation_split > 0");

  const Corpus corpus = read_corpus(o.paths, who);
  const std::string& text = corpus.text;
  // The vocabulary comes from the whole text, so that both parts agree on it.
  std::array<int, 256> id;
  std::string vocabulary;
  for (int b = 0; b < 256; ++b) id[b] = b;
  if (o.chars) {
    std::array<bool, 256> seen{};
    for (unsigned char c : text) seen[c] = true;
    for (int b = 0; b < 256; ++b)
      if (seen[b]) {
        id[b] = static_cast<int>(vocabulary.size());
        vocabulary += static_cast<char>(b);
      }
  }
  const int64_t total = static_cast<int64_t>(text.size());
  const int64_t cut = total - static_cast<int64_t>(std::llround(o.validation_split * total));
  int64_t begin = 0, end = total;
  if (o.subset == TextSubset::training) end = cut;
  if (o.subset == TextSubset::validation) begin = cut;

  // A window needs T + 1 bytes: its T inputs and the target after the last.
  const int64_t T = o.sequence_length, span = end - begin;
  const int64_t n = span < T + 1 ? 0 : (span - T - 1) / stride + 1;
  if (n == 0)
    throw UsageError(who + ": " + std::to_string(span) + " bytes of text" +
                     (o.subset == TextSubset::all ? "" : " in this subset") +
                     " make no window of sequence_length " + std::to_string(T) + " + 1");
  Dataset d;
  d.x = Tensor({n, T}, DType::u8);
  d.y = Tensor({n, T}, DType::i32);
  uint8_t* x = d.x.u8();
  int32_t* y = d.y.i32();
  for (int64_t e = 0; e < n; ++e) {
    const auto* w = reinterpret_cast<const unsigned char*>(text.data() + begin + e * stride);
    for (int64_t t = 0; t < T; ++t) {
      x[e * T + t] = static_cast<uint8_t>(id[w[t]]);
      y[e * T + t] = id[w[t + 1]];
    }
  }
  d.info = {{"vocabulary_size", o.chars ? static_cast<int64_t>(vocabulary.size()) : 256},
            {"bytes", span},
            {"files", corpus.files}};
  if (o.chars) d.info["vocabulary"] = vocabulary;
  return d;
}

}  // namespace drun::data

namespace drun::data {

namespace {

std::vector<std::string> paths_option(Options& o) {
  const json& v = o.value("path");
  std::vector<std::string> paths;
  if (v.is_string()) {
    paths.push_back(v.get<std::string>());
  } else if (v.is_array()) {
    for (const auto& p : v) {
      if (!p.is_string())
        throw UsageError(o.owner() + ": path must be a file, a folder or a list of them, got " +
                         v.dump());
      paths.push_back(p.get<std::string>());
    }
  } else {
    throw UsageError(o.owner() + ": path must be a file, a folder or a list of them, got " +
                     v.dump());
  }
  return paths;
}

TextOptions parse_text_options(Options& o) {
  TextOptions t;
  t.paths = paths_option(o);
  t.sequence_length = o.get<int64_t>("sequence_length");
  t.stride = o.get<int64_t>("stride", 0);
  const auto vocabulary = o.get<std::string>("vocabulary");
  if (vocabulary != "bytes" && vocabulary != "chars")
    throw UsageError(o.owner() + ": vocabulary must be 'bytes' or 'chars', got '" + vocabulary +
                     "'");
  t.chars = vocabulary == "chars";
  t.validation_split = o.get<double>("validation_split");
  const auto subset = o.get<std::string>("subset");
  if (subset == "training")
    t.subset = TextSubset::training;
  else if (subset == "validation")
    t.subset = TextSubset::validation;
  else if (subset != "all")
    throw UsageError(o.owner() + ": subset must be 'all', 'training' or 'validation', got '" +
                     subset + "'");
  return t;
}

}  // namespace

const ReaderInfo& text_reader() {
  static const ReaderInfo info{
      .about = {.names = {"text"},
                .doc = "text files as windows of token ids; y: the next id of each step",
                .schema = {{"path", OptionType::any, kRequired,
                            "a file, a folder (its text files in name order) or a list of them"},
                           {"sequence_length", OptionType::integer, kRequired,
                            "T: ids per example"},
                           {"stride", OptionType::integer, nullptr,
                            "bytes between windows' starts (default: sequence_length)"},
                           {"vocabulary", OptionType::string, "bytes",
                            "'bytes' (ids 0..255) or 'chars' (the text's distinct bytes, sorted, "
                            "as 0..V-1)"},
                           {"validation_split", OptionType::number, 0.0,
                            "the fraction of the text, at its end, held out for validation"},
                           {"subset", OptionType::string, "all",
                            "'all', 'training' or 'validation' (needs validation_split)"}}},
      .open = [](Options& o, const ReaderEnv&) {
        return read_text(parse_text_options(o), o.owner());
      }};
  return info;
}

}  // namespace drun::data
