// Near misses of a name a user typed: the one suggestion that unknown-option,
// unknown-entry and unknown-flag messages add ("did you mean 'activation'?"),
// so that a typo is fixed without reading the whole list of valid names.
#pragma once
#include <string>
#include <vector>

namespace drun {

// The edits (insert, delete, substitute, swap two neighbours) from a to b,
// case aside: "adam" is a near miss of "Adam".
int edit_distance(const std::string& a, const std::string& b);

// The candidate nearest to `name` within two edits (fewer for short names, so
// that "lr" suggests nothing at random), the first of equals; "" if none.
// Among equally near names, the one whose case matches better.
std::string closest_name(const std::string& name, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" for closest_name's answer, "" without one: what an
// error message appends after the unknown name.
std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates);
// The same over a list as messages print it: "relu, sigmoid, tanh" (a name
// of its own: a braced list of two strings would also make a std::string).
std::string did_you_mean_in_list(const std::string& name, const std::string& comma_separated);

}  // namespace drun
