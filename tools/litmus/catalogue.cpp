#include "tools/litmus/catalogue.hpp"

#include <algorithm>
#include <filesystem>
#include <utility>

namespace iso::litmus {
namespace {

namespace fs = std::filesystem;

bool load_file(const std::string& path, std::vector<test>& out, std::string& error) {
  parse_result r = parse_file(path);
  if (!r.parsed) {
    error = r.error.to_string();
    return false;
  }
  out.push_back(std::move(*r.parsed));
  return true;
}

}  // namespace

catalogue::catalogue(std::string folder) : folder_(std::move(folder)) {}

std::vector<std::string> catalogue::names() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder_, ec)) {
    if (entry.path().extension() == ".litmus") out.push_back(entry.path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool catalogue::load(const std::string& wanted, std::vector<test>& out, std::string& error) const {
  if (wanted.find('/') != std::string::npos || wanted.ends_with(".litmus")) {
    return load_file(wanted, out, error);
  }
  const std::vector<std::string> known = names();
  if (known.empty()) {
    error = "the catalogue folder " + folder_ +
            " holds no .litmus files (--catalogue DIR or ISO_LITMUS_CATALOGUE names another)";
    return false;
  }
  if (wanted == "all") {
    for (const std::string& name : known) {
      if (!load_file((fs::path(folder_) / (name + ".litmus")).string(), out, error)) return false;
    }
    return true;
  }
  if (std::find(known.begin(), known.end(), wanted) == known.end()) {
    std::string list;
    for (const std::string& name : known) list += (list.empty() ? "" : ", ") + name;
    error = "unknown test '" + wanted + "'; the catalogue has " + list;
    return false;
  }
  if (!load_file((fs::path(folder_) / (wanted + ".litmus")).string(), out, error)) return false;
  if (out.back().name != wanted) {
    error = folder_ + "/" + wanted + ".litmus names its test '" + out.back().name +
            "'; a catalogue file must be named after its test";
    out.pop_back();
    return false;
  }
  return true;
}

}  // namespace iso::litmus
