// SPDX-License-Identifier: GPL-2.0-or-later
/* A stand-in for a Slurm plugin file: what SPANK_PLUGIN() exports, for
 * tests/common/test_slurm_plugin.cpp (read without loading it). */
const char plugin_name[] = "fixture";
const unsigned int plugin_version = 0x180b05; /* Slurm 24.11.5 */
const unsigned long long not_four_bytes = 1;
extern const unsigned int referenced_only;
const unsigned int* use_it(void) { return &referenced_only; }
