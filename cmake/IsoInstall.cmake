# Installation is filled in with the package rules.
