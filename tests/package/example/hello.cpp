// Every node says hello to the next; each prints what it received.
#include <cstdio>
#include <cstring>

#include <iso/iso.hpp>

int main(int argc, char** argv) {
  return iso::run(argc, argv, [](iso::node& node) {
    const iso::node_id next = (node.id() + 1) % node.count();
    const char text[] = "hello";
    node.send(next, std::as_bytes(std::span(text)));
    iso::message m = node.receive();
    if (std::memcmp(m.bytes().data(), text, sizeof(text)) != 0) {
      throw iso::error(iso::error_code::data_loss, "garbled greeting");
    }
    std::printf("node %u of %u got '%s' from node %u (iso %s)\n", node.id(), node.count(),
                reinterpret_cast<const char*>(m.bytes().data()), m.source(), ISO_VERSION_STRING);
  });
}
