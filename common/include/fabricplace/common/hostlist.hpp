// SPDX-License-Identifier: GPL-2.0-or-later
// Slurm hostlist expressions: "node[001-016,020]", "gpu[1-2]-ib[0-1]", "a,b,c[1-3]".
//
// expand() follows Slurm's syntax: comma-separated terms at the top level, each term a
// prefix with zero or more bracketed range sets (cartesian product, left to right).
// Zero padding is kept from the range bounds ("[08-11]" -> 08 09 10 11).
// compress() writes the Slurm form: names that differ only in their trailing run of digits
// share one bracket ("node[001-016,020]"), groups in order of first appearance, duplicates
// dropped. Only a trailing number is ranged because Slurm 22.05 rejects text after the last
// ']' of a term (_hostlist_create_bracketed in src/common/hostlist.c), so "su[01-02]-leaf"
// would not read back there; expand() is more lenient and accepts it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fabricplace/common/error.hpp"

namespace fabricplace::hostlist {

/// What expand() does with a name the expression spells twice ("n[1-2],n1").
enum class Duplicates : bool {
  kDrop,  ///< keep the first (a set of hosts)
  kKeep,  ///< keep every one, in order (a list whose repeats the caller judges)
};

/// Expands a hostlist expression. Errors (kSyntax) name the offending column.
Result<std::vector<std::string>> expand(std::string_view expr,
                                        Duplicates duplicates = Duplicates::kDrop);

/// Compresses host names into a hostlist expression.
std::string compress(const std::vector<std::string>& names);

/// Natural ordering: "node2" < "node10" (runs of digits compare by value, then width).
bool natural_less(std::string_view a, std::string_view b);

}  // namespace fabricplace::hostlist
