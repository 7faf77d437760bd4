// The umbrella header: everything an application needs.
//
//   #include <iso/iso.hpp>
#pragma once

#include "iso/counter.hpp"
#include "iso/error.hpp"
#include "iso/fiber.hpp"
#include "iso/fork.hpp"
#include "iso/isochron.hpp"
#include "iso/node.hpp"
#include "iso/notice.hpp"
#include "iso/object.hpp"
#include "iso/options.hpp"
#include "iso/ordered_group.hpp"
#include "iso/run.hpp"
#include "iso/shared.hpp"
#include "iso/status.hpp"
#include "iso/trace.hpp"
#include "iso/version.hpp"
#include "iso/window.hpp"
