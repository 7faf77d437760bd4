#include "tools/litmus/litmus_test.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

namespace iso::litmus {
namespace {

enum class kind { ident, number, text, punct, end };

struct token {
  kind type = kind::end;
  std::string text;
  int line = 0;
  int column = 0;
};

// Thrown inside the parser only; parse() turns it into a parse_error.
struct failure {
  int line;
  int column;
  std::string message;
};

std::string show(const token& t) {
  switch (t.type) {
    case kind::end:
      return "the end of the file";
    case kind::text:
      return "a quoted text";
    default:
      return "'" + t.text + "'";
  }
}

std::vector<token> tokenize(const std::string& s) {
  std::vector<token> out;
  int line = 1;
  int column = 1;
  std::size_t i = 0;
  auto advance = [&](std::size_t n) {
    for (std::size_t k = 0; k < n && i < s.size(); ++k, ++i) {
      if (s[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
  };
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      advance(1);
      continue;
    }
    const int at_line = line;
    const int at_column = column;
    if (s.compare(i, 2, "(*") == 0) {
      const std::size_t close = s.find("*)", i + 2);
      if (close == std::string::npos) throw failure{at_line, at_column, "unterminated comment"};
      advance(close + 2 - i);
      continue;
    }
    token t{kind::punct, "", at_line, at_column};
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_' ||
                              s[j] == '.' || s[j] == '+')) {
        ++j;
      }
      t = {kind::ident, s.substr(i, j - i), at_line, at_column};
      advance(j - i);
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '-' && i + 1 < s.size() &&
                std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      std::size_t j = i + 1;
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      // Test names may start with a digit ("2+2W", "3.SB"): then the token is a name.
      kind type = kind::number;
      while (c != '-' && j < s.size() &&
             (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '+' || s[j] == '.')) {
        type = kind::ident;
        ++j;
      }
      t = {type, s.substr(i, j - i), at_line, at_column};
      advance(j - i);
    } else if (c == '"') {
      const std::size_t close = s.find('"', i + 1);
      if (close == std::string::npos) throw failure{at_line, at_column, "unterminated quoted text"};
      t = {kind::text, s.substr(i + 1, close - i - 1), at_line, at_column};
      advance(close + 1 - i);
    } else if (s.compare(i, 2, "/\\") == 0) {
      t.text = "/\\";
      advance(2);
    } else if (std::string("{};,|=():").find(c) != std::string::npos) {
      t.text = std::string(1, c);
      advance(1);
    } else {
      throw failure{at_line, at_column, std::string("unexpected character '") + c + "'"};
    }
    out.push_back(std::move(t));
  }
  out.push_back({kind::end, "", line, column});
  return out;
}

bool is_register(const std::string& name) {
  return name.size() >= 2 && name[0] == 'r' &&
         std::all_of(name.begin() + 1, name.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

class parser {
 public:
  explicit parser(std::vector<token> tokens) : tokens_(std::move(tokens)) {}

  test run() {
    test t;
    expect_word("ISO", "a litmus file starts with 'ISO <name>'");
    t.name = expect(kind::ident, "the test's name").text;
    if (peek().type == kind::text) t.description = next().text;
    if (is_punct("{")) parse_initial(t);
    parse_header(t);
    parse_rows(t);
    parse_condition(t);
    if (peek().type != kind::end) fail(peek(), "expected the end of the file after the condition");
    validate(t);
    return t;
  }

 private:
  [[nodiscard]] const token& peek() const { return tokens_[pos_]; }
  const token& next() {
    const token& t = tokens_[pos_];
    if (t.type != kind::end) ++pos_;
    return t;
  }
  [[noreturn]] static void fail(const token& at, const std::string& message) {
    throw failure{at.line, at.column, message + ", found " + show(at)};
  }
  [[nodiscard]] bool is_punct(const char* p) const {
    return peek().type == kind::punct && peek().text == p;
  }
  const token& expect(kind type, const std::string& what) {
    if (peek().type != type) fail(peek(), "expected " + what);
    return next();
  }
  void expect_punct(const char* p, const std::string& why) {
    if (!is_punct(p)) fail(peek(), std::string("expected '") + p + "' " + why);
    next();
  }
  void expect_word(const char* word, const std::string& why) {
    if (peek().type != kind::ident || peek().text != word) fail(peek(), why);
    next();
  }
  std::int64_t number(const std::string& what) {
    const token& t = expect(kind::number, what);
    try {
      return std::stoll(t.text);
    } catch (const std::exception&) {
      throw failure{t.line, t.column, "the number " + t.text + " is out of range"};
    }
  }
  std::string location(const std::string& what) {
    const token& t = expect(kind::ident, what);
    if (is_register(t.text) || t.text == "exists") {
      throw failure{t.line, t.column,
                    "'" + t.text +
                        "' is not a location name (r<digits> are "
                        "registers, 'exists' is a keyword)"};
    }
    return t.text;
  }

  void parse_initial(test& t) {
    next();  // {
    while (!is_punct("}")) {
      const token& at = peek();
      const std::string loc = location("a location in the initial values");
      expect_punct("=", "after the location");
      const std::int64_t value = number("an initial value");
      if (!t.initial.emplace(loc, value).second) {
        throw failure{at.line, at.column, "location " + loc + " is initialised twice"};
      }
      where_[loc] = {at.line, at.column};
      if (is_punct(";") || is_punct(",")) next();
    }
    next();  // }
  }

  void parse_header(test& t) {
    for (;;) {
      const token& p = expect(kind::ident, "a process name P0, P1, ...");
      const std::string want = "P" + std::to_string(t.processes.size());
      if (p.text != want) {
        throw failure{p.line, p.column, "expected process " + want + ", found '" + p.text + "'"};
      }
      t.processes.emplace_back();
      if (is_punct(";")) break;
      expect_punct("|", "between process names");
    }
    next();  // ;
  }

  void parse_rows(test& t) {
    while (!(peek().type == kind::ident && peek().text == "exists")) {
      if (peek().type == kind::end) fail(peek(), "expected a row or 'exists'");
      const token& row_start = peek();
      std::size_t column = 0;
      for (;;) {
        if (column >= t.processes.size()) {
          fail(peek(), "this row has more cells than the " + std::to_string(t.processes.size()) +
                           " processes");
        }
        isochron_spec iso = parse_cell(t, column);
        if (!iso.empty()) t.processes[column].isochrons.push_back(std::move(iso));
        ++column;
        if (is_punct(";")) break;
        if (!is_punct("|")) fail(peek(), "expected '|' between cells or ';' at the end of the row");
        next();
      }
      if (column != t.processes.size()) {
        throw failure{row_start.line, row_start.column,
                      "this row has " + std::to_string(column) + " cells; the test has " +
                          std::to_string(t.processes.size()) + " processes"};
      }
      next();  // ;
    }
  }

  isochron_spec parse_cell(test& t, std::size_t proc) {
    isochron_spec out;
    if (is_punct("|") || is_punct(";")) return out;
    for (;;) {
      const token& left = expect(kind::ident, "a register or a location");
      expect_punct("=", "in an access ('x = 1' writes, 'r0 = x' reads)");
      access a;
      if (peek().type == kind::number) {
        if (is_register(left.text)) {
          throw failure{
              left.line, left.column,
              "a register cannot be written: '" + left.text + " = <number>'; write a location"};
        }
        a.write = true;
        a.location = location_at(left);
        const token& v = peek();
        a.value = number("a value");
        note_write(t, a, v);
      } else {
        if (!is_register(left.text)) {
          throw failure{left.line, left.column,
                        "'" + left.text +
                            " = <location>': the left side of a read must be a "
                            "register (r0, r1, ...)"};
        }
        a.reg = left.text;
        a.location = location("a location to read");
        auto& regs = t.processes[proc].registers;
        if (std::find(regs.begin(), regs.end(), a.reg) != regs.end()) {
          throw failure{left.line, left.column,
                        "register " + a.reg + " of P" + std::to_string(proc) + " is read twice"};
        }
        regs.push_back(a.reg);
      }
      use_location(t, a.location);
      out.push_back(std::move(a));
      if (!is_punct(",")) break;
      next();
    }
    return out;
  }

  std::string location_at(const token& t) {
    if (t.text == "exists") throw failure{t.line, t.column, "'exists' is not a location name"};
    return t.text;
  }

  static void use_location(test& t, const std::string& loc) {
    if (std::find(t.locations.begin(), t.locations.end(), loc) == t.locations.end()) {
      t.locations.push_back(loc);
    }
  }

  void note_write(const test& t, const access& a, const token& at) {
    if (a.value == 0) {
      throw failure{at.line, at.column,
                    "writes must not store 0 (the value of fresh memory): " + a.location + " = 0"};
    }
    if (a.value == t.initial_value(a.location)) {
      throw failure{at.line, at.column,
                    "writes must differ from the initial value: " + a.location + " = " +
                        std::to_string(a.value)};
    }
    if (!written_.emplace(a.location, a.value).second) {
      throw failure{at.line, at.column,
                    "the value " + std::to_string(a.value) + " is written to " + a.location +
                        " twice; values written to a location must be unique"};
    }
  }

  void parse_condition(test& t) {
    next();  // exists
    expect_punct("(", "after 'exists'");
    for (;;) {
      term c;
      const token& at = peek();
      if (peek().type == kind::number) {
        const std::int64_t p = number("a process number");
        if (p < 0 || static_cast<std::size_t>(p) >= t.processes.size()) {
          throw failure{at.line, at.column, "there is no process P" + std::to_string(p)};
        }
        c.process = static_cast<std::uint32_t>(p);
        expect_punct(":", "between a process number and its register");
        const token& r = expect(kind::ident, "a register");
        const auto& regs = t.processes[*c.process].registers;
        if (std::find(regs.begin(), regs.end(), r.text) == regs.end()) {
          throw failure{r.line, r.column,
                        "P" + std::to_string(p) + " has no register '" + r.text + "'"};
        }
        c.name = r.text;
      } else {
        const token& l = peek();
        c.name = location("a location or process:register");
        if (std::find(t.locations.begin(), t.locations.end(), c.name) == t.locations.end()) {
          throw failure{l.line, l.column, "no process uses location '" + c.name + "'"};
        }
      }
      expect_punct("=", "in a condition term");
      c.value = number("a value");
      t.exists.push_back(std::move(c));
      if (is_punct(")")) break;
      if (!is_punct("/\\")) fail(peek(), "expected '/\\' between terms or ')'");
      next();
    }
    next();  // )
  }

  void validate(const test& t) const {
    for (const auto& [loc, at] : where_) {
      if (std::find(t.locations.begin(), t.locations.end(), loc) == t.locations.end()) {
        throw failure{at.first, at.second, "location " + loc + " is initialised but never used"};
      }
    }
  }

  std::vector<token> tokens_;
  std::size_t pos_ = 0;
  std::map<std::string, std::pair<int, int>> where_;
  std::set<std::pair<std::string, std::int64_t>> written_;
};

}  // namespace

std::vector<std::string> test::observed_locations() const {
  std::vector<std::string> out;
  for (const term& c : exists) {
    if (!c.process && std::find(out.begin(), out.end(), c.name) == out.end()) {
      out.push_back(c.name);
    }
  }
  return out;
}

std::int64_t test::initial_value(const std::string& location) const {
  auto it = initial.find(location);
  return it == initial.end() ? 0 : it->second;
}

std::string parse_error::to_string() const {
  std::ostringstream out;
  out << file << ":" << line << ":" << column << ": " << message;
  return out.str();
}

parse_result parse(const std::string& text, const std::string& file) {
  parse_result result;
  try {
    result.parsed = parser(tokenize(text)).run();
  } catch (const failure& f) {
    result.error = {file, f.line, f.column, f.message};
  }
  return result;
}

parse_result parse_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    parse_result result;
    result.error = {path, 0, 0, "cannot read the file"};
    return result;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

}  // namespace iso::litmus
