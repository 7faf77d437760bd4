// Small POSIX helpers isorun's parts share: whole writes and its own one-line messages.
#pragma once

#include <string_view>

namespace iso::isorun {

// Writes all of `bytes` to `fd`, retrying after EINTR and waiting out EAGAIN (our stdout may
// be a non-blocking description someone else set up). False on any other error, e.g. EPIPE
// when the reader has gone; callers then drop the output rather than stop the job.
bool write_all(int fd, std::string_view bytes);

// Prints "isorun: <message>\n" to stderr in one write, so it never splits a node's line.
void say(std::string_view message);

// Makes sure descriptors 0, 1 and 2 are open (on /dev/null if not), so that no descriptor
// isorun opens later lands on one of them and gets clobbered when a child redirects them.
void ensure_standard_fds_open();

}  // namespace iso::isorun
