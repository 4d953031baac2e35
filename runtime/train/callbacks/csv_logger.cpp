#include "train/callbacks/csv_logger.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "train/callbacks/callback_registry.hpp"

namespace drun::train {

const CallbackInfo& csv_logger_callback() {
  static const CallbackInfo info{
      {{"CSVLogger"},
       "writes each epoch's logs as a row of a CSV file",
       {{"filename", OptionType::string, kRequired, "the CSV file"},
        {"separator", OptionType::string, ",", "between values"},
        {"append", OptionType::boolean, false, "add to an existing file instead of replacing it"}},
       {"filename", "separator", "append"}},
      [](Options& o) { return std::make_unique<CSVLogger>(o); }};
  return info;
}

CSVLogger::CSVLogger(Options& o)
    : filename_(o.get<std::string>("filename")),
      separator_(o.get<std::string>("separator")),
      append_(o.get<bool>("append")) {
  if (separator_.size() != 1)
    throw UsageError("CSVLogger: separator must be one character, got '" + separator_ + "'");
}

void CSVLogger::train_begin(CallbackControl& c) {
  keys_.reset();
  if (!c.chief()) return;
  // A resumed run goes on with the rows of the run it continues.
  const bool append = append_ || resumed_;
  std::error_code ec;
  header_ = !append || !std::filesystem::exists(filename_, ec) ||
            std::filesystem::file_size(filename_, ec) == 0;
  out_.open(filename_, append ? std::ios::app : std::ios::trunc);
  if (!out_) throw UsageError("CSVLogger: cannot open '" + filename_ + "' for writing");
}

void CSVLogger::epoch_end(int64_t epoch, const Logs& logs, CallbackControl& c) {
  if (!c.chief()) return;
  if (!keys_) {
    std::vector<std::string> keys;
    for (const auto& kv : logs.values) keys.push_back(kv.first);
    std::sort(keys.begin(), keys.end());
    const bool has_val = std::any_of(keys.begin(), keys.end(),
                                     [](const std::string& k) { return k.rfind("val_", 0) == 0; });
    if (!has_val) {
      const size_t n = keys.size();
      for (size_t i = 0; i < n; ++i) keys.push_back("val_" + keys[i]);
    }
    keys_ = keys;
    if (header_) {
      out_ << "epoch";
      for (const auto& k : *keys_) out_ << separator_ << k;
      out_ << "\r\n";  // Python's csv module ends rows so
    }
  }
  out_ << epoch;
  for (const auto& k : *keys_) {
    const auto v = logs.get(k);
    // fmt's shortest round-trip form is Python's repr of a float.
    out_ << separator_ << (v ? fmt::format("{}", *v) : std::string("NA"));
  }
  out_ << "\r\n";
  out_.flush();
}

void CSVLogger::train_end(CallbackControl& c) {
  (void)c;
  if (out_.is_open()) out_.close();
}

}  // namespace drun::train
