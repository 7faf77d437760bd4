// hello.cpp: every node adds its id to a shared counter, atomically, without a lock.
// (This is the README's first program; the package test builds it out of tree.)
#include <cstdio>
#include <iso/iso.hpp>

int main(int argc, char** argv) {
  return iso::run(argc, argv, [](iso::node& node) {
    // Collective: every node allocates the same variables, here one copy on node 0.
    iso::shared_var<std::int64_t> counter =
        node.allocate<std::int64_t>(1, iso::placement::on(0))[0];

    // Read-and-reserve in one isochron: `sched` makes the counter unsubstantiated, so any
    // read after this one in logical time waits until we `assign` the new value.
    iso::value<std::int64_t> old;
    {
      iso::isochron iso(node);
      old = iso.read(counter);  // non-blocking: a handle
      iso.sched(counter);
    }
    iso::isochron iso(node);
    iso.assign(counter, old.get() + node.id());  // get() blocks until the value is here
    iso.end();

    node.barrier();  // ordered: everything issued before it has executed everywhere
    iso::isochron look(node);
    iso::value<std::int64_t> total = look.read(counter);
    look.end();
    std::printf("node %u of %u sees %lld\n", node.id(), node.count(),
                static_cast<long long>(total.get()));
  });
}
