// Turns the byte stream a node writes into whole lines prefixed with "[i] ", so the lines of
// different nodes interleave but never mix.
#pragma once

#include <string>
#include <string_view>

namespace iso::isorun {

class output_tagger {
 public:
  // Lines go to `out_fd` (isorun's own stdout or stderr), which stays owned by the caller.
  output_tagger(int node, int out_fd);

  // Takes the next bytes of the node's stream and writes out every line they complete.
  void feed(std::string_view bytes);

  // The stream ended: a partial last line is written with a newline added.
  void finish();

 private:
  // A line longer than this is written in pieces (each prefixed) so memory stays bounded
  // whatever a node writes.
  static constexpr std::size_t kMaxLine = 64 * 1024;

  void emit(std::string_view line);

  std::string prefix_;
  int out_fd_;
  std::string partial_;  // bytes after the last newline seen
  std::string scratch_;  // one prefixed line, written in a single write when it fits
  bool broken_ = false;  // out_fd_ failed (e.g. EPIPE); the rest is dropped
};

}  // namespace iso::isorun
