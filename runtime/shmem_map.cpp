#include "runtime/shmem_map.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <numeric>

#include "absl/strings/str_format.h"
#include "base/errno_status.hpp"

namespace iso::runtime {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// The blank-separated tokens of one line, comment removed.
std::vector<std::string_view> tokens_of(std::string_view line) {
  if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) {
    line = line.substr(0, hash);
  }
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_blank(line[i])) ++i;
    const std::size_t start = i;
    while (i < line.size() && !is_blank(line[i])) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// A plain decimal number: digits only (no sign, no blanks, no 0x), so that a typo such as
// "1O" or "-1" is reported rather than read as something else.
std::optional<std::uint64_t> decimal(std::string_view token) {
  if (token.empty() || token.size() > 19) return std::nullopt;  // 19 digits cannot overflow
  std::uint64_t value = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return value;
}

// What a line that fits neither syntax is told.
constexpr const char* kSyntaxes =
    "expected '<first_page> <page_count> <copyset>' (e.g. '128 4 0,2' or '0 128 all') or the "
    "Regehr report's '<page>[-<page>] : <node>[,<node>]* ;' (e.g. '128-131 : 0,2;')";

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

// Parses a map file one line at a time; the first error stops it.
class parser {
 public:
  parser(std::string_view source, std::uint64_t pages, std::uint32_t nodes)
      : source_(source), pages_(pages), nodes_(nodes) {}

  // Adds the region on line `number` to `placed`; `named_by` remembers which line placed a
  // page, for the overlap message.
  absl::Status line(int number, std::string_view text,
                    std::vector<std::optional<std::vector<std::uint32_t>>>& placed,
                    std::vector<int>& named_by) {
    number_ = number;
    const std::vector<std::string_view> t = tokens_of(text);
    if (t.empty()) return absl::OkStatus();
    // A colon marks the Regehr report's syntax (B.2.2), which a map may mix with ours.
    if (text.substr(0, text.find('#')).find(':') != std::string_view::npos) {
      return regehr_line(text.substr(0, text.find('#')), placed, named_by);
    }
    if (t.size() == 1) return error("the line ends after '%s'; %s", t[0], kSyntaxes);
    if (t.size() == 2) return error("missing the copyset after '%s'", t[1]);
    if (t.size() > 3) return error("unexpected '%s' after the copyset; %s", t[3], kSyntaxes);

    const std::optional<std::uint64_t> first = decimal(t[0]);
    if (!first) return error("first page '%s' is not a decimal number; %s", t[0], kSyntaxes);
    if (*first >= pages_) {
      return error("first page '%s' is outside the map, which has pages 0..%u", t[0], pages_ - 1);
    }
    const std::optional<std::uint64_t> count = decimal(t[1]);
    if (!count || *count == 0) return error("page count '%s' is not a positive number", t[1]);
    if (*count > pages_ - *first) {
      return error("page count '%s' runs past the last page (%u) from page %u", t[1], pages_ - 1,
                   *first);
    }

    absl::StatusOr<std::vector<std::uint32_t>> copyset = parse_copyset(t[2]);
    if (!copyset.ok()) return copyset.status();
    return place(*first, *count, *std::move(copyset), absl::StrFormat("%s %s", t[0], t[1]), placed,
                 named_by);
  }

 private:
  // `page [-page] : node [,node]* ;` (blanks anywhere between the parts).
  absl::Status regehr_line(std::string_view text,
                           std::vector<std::optional<std::vector<std::uint32_t>>>& placed,
                           std::vector<int>& named_by) {
    const std::size_t colon = text.find(':');
    const std::string_view range = trim(text.substr(0, colon));
    std::string_view rest = trim(text.substr(colon + 1));
    const std::size_t dash = range.find('-');
    const std::string_view lo_token = trim(range.substr(0, dash));
    const std::string_view hi_token =
        dash == std::string_view::npos ? lo_token : trim(range.substr(dash + 1));
    const std::optional<std::uint64_t> lo = decimal(lo_token);
    if (!lo) return error("page '%s' is not a decimal number; %s", lo_token, kSyntaxes);
    const std::optional<std::uint64_t> hi = decimal(hi_token);
    if (!hi) return error("last page '%s' is not a decimal number; %s", hi_token, kSyntaxes);
    if (*hi < *lo) return error("page range '%s' runs backwards", range);
    if (*hi >= pages_) {
      return error("page %u is outside the map, which has pages 0..%u", *hi, pages_ - 1);
    }
    if (rest.empty() || rest.back() != ';') {
      return error("the node list '%s' does not end with ';'; %s", rest, kSyntaxes);
    }
    rest = trim(rest.substr(0, rest.size() - 1));
    if (rest.find(';') != std::string_view::npos) {
      return error("more than one ';' in '%s'; one region per line", rest);
    }
    // The node list as one token: blanks around the commas are allowed here.
    std::string list;
    for (char c : rest) {
      if (!is_blank(c)) list.push_back(c);
    }
    if (list.empty()) return error("no node after ':'; %s", kSyntaxes);
    if (list == "all") return error("'all' is not a node id here; list the nodes");
    absl::StatusOr<std::vector<std::uint32_t>> copyset = parse_copyset(list);
    if (!copyset.ok()) return copyset.status();
    return place(*lo, *hi - *lo + 1, *std::move(copyset), std::string(range), placed, named_by);
  }

  // Places pages first .. first+count-1 on `copyset`, unless a line placed one of them.
  absl::Status place(std::uint64_t first, std::uint64_t count,
                     const std::vector<std::uint32_t>& copyset, const std::string& what,
                     std::vector<std::optional<std::vector<std::uint32_t>>>& placed,
                     std::vector<int>& named_by) {
    for (std::uint64_t p = first; p < first + count; ++p) {
      if (placed[p]) {
        return error("page %u of '%s' is already placed by line %d", p, what, named_by[p]);
      }
    }
    for (std::uint64_t p = first; p < first + count; ++p) {
      placed[p] = copyset;
      named_by[p] = number_;
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<std::uint32_t>> parse_copyset(std::string_view token) {
    std::vector<std::uint32_t> nodes;
    if (token == "all") {
      nodes.resize(nodes_);
      std::iota(nodes.begin(), nodes.end(), 0u);
      return nodes;
    }
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = token.find(',', start);
      const std::string_view id = token.substr(
          start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
      if (id.empty()) return error("empty node id in copyset '%s'", token);
      const std::optional<std::uint64_t> n = decimal(id);
      if (!n) {
        return error("copyset '%s' is neither 'all' nor a comma list of node ids ('%s')", token,
                     id);
      }
      if (*n >= nodes_) {
        return error("node '%s' in copyset '%s' is not in this job of %u nodes (0..%u)", id, token,
                     nodes_, nodes_ - 1);
      }
      nodes.push_back(static_cast<std::uint32_t>(*n));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    return nodes;
  }

  template <typename... Args>
  absl::Status error(const absl::FormatSpec<Args...>& format, const Args&... args) const {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s:%d: %s", source_, number_, absl::StrFormat(format, args...)));
  }

  std::string_view source_;
  std::uint64_t pages_;
  std::uint32_t nodes_;
  int number_ = 0;
};

}  // namespace

shmem_map::shmem_map(std::uint64_t pages, std::uint32_t nodes) : nodes_(nodes), placed_(pages) {}

absl::StatusOr<shmem_map> shmem_map::parse(std::string_view text, std::string_view source,
                                           std::uint64_t pages, std::uint32_t nodes) {
  if (nodes == 0) return absl::InvalidArgumentError("a shmem map needs a job of 1+ nodes");
  shmem_map map(pages, nodes);
  std::vector<int> named_by(pages, 0);
  parser p(source, pages, nodes);
  int number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++number;
    const std::string_view line = text.substr(start, end - start);
    if (absl::Status s = p.line(number, line, map.placed_, named_by); !s.ok()) return s;
    start = end + 1;
  }
  return map;
}

absl::StatusOr<shmem_map> shmem_map::load(const std::string& path, std::uint64_t pages,
                                          std::uint32_t nodes) {
  // stdio rather than a stream: it keeps errno, so that the message says why (a directory
  // opens but fails to read with EISDIR, which a stream would turn into an empty map).
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return base::errno_status(absl::StrFormat("open shmem map '%s'", path));
  std::string text;
  char buffer[4096];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof(buffer), file)) > 0) text.append(buffer, got);
  const int read_error = std::ferror(file) != 0 ? errno : 0;
  std::fclose(file);
  if (read_error != 0) {
    return base::errno_status(absl::StrFormat("read shmem map '%s'", path), read_error);
  }
  return parse(text, path, pages, nodes);
}

std::vector<std::uint32_t> shmem_map::copyset(std::uint64_t page) const {
  if (named(page)) return *placed_[page];
  std::vector<std::uint32_t> all(nodes_);
  std::iota(all.begin(), all.end(), 0u);
  return all;
}

}  // namespace iso::runtime
