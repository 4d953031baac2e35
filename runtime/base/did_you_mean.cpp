#include "base/did_you_mean.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

namespace drun {

namespace {
// Case does not make a name a different word: "adam" is a near miss of "Adam".
char folded(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

char same(char c) {
  return c;
}

// Optimal string alignment (Damerau-Levenshtein without repeated edits of a
// substring) of the characters as `norm` maps them, over three rows.
template <class Norm>
int distance(const std::string& a, const std::string& b, Norm norm) {
  const size_t n = b.size();
  std::vector<int> before(n + 1), prev(n + 1), row(n + 1);
  for (size_t j = 0; j <= n; ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= n; ++j) {
      const int cost = norm(a[i - 1]) == norm(b[j - 1]) ? 0 : 1;
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && norm(a[i - 1]) == norm(b[j - 2]) && norm(a[i - 2]) == norm(b[j - 1]))
        row[j] = std::min(row[j], before[j - 2] + 1);
    }
    before.swap(prev);
    prev.swap(row);
  }
  return prev[n];
}
}  // namespace

int edit_distance(const std::string& a, const std::string& b) {
  return distance(a, b, folded);
}

std::string closest_name(const std::string& name, const std::vector<std::string>& candidates) {
  const int most = name.size() <= 3 ? 1 : 2;
  std::string best;
  // Among equally near names, the one whose case matches better ('adam', not 'Adam').
  std::pair<int, int> best_distance{most + 1, 0};
  for (const std::string& c : candidates) {
    if (c == name) continue;
    const std::pair<int, int> d{edit_distance(name, c), distance(name, c, same)};
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates) {
  const std::string best = closest_name(name, candidates);
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

std::string did_you_mean_in_list(const std::string& name, const std::string& comma_separated) {
  std::vector<std::string> names;
  std::string word;
  for (const char c : comma_separated + ",") {
    if (c != ',' && c != ' ') {
      word += c;
    } else if (!word.empty()) {
      names.push_back(word);
      word.clear();
    }
  }
  return did_you_mean(name, names);
}

}  // namespace drun
