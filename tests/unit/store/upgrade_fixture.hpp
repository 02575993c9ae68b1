// Records as each past schema version held them, for the upgrade tests: write_records_at(db, N)
// fills a database at version N with a row in every table that version has (SQL valid at N,
// columns added later set by the versions that added them); expect_records_intact() checks,
// through today's repositories, that a store upgraded from N still holds every one of them.
#pragma once

#include <filesystem>

#include "store/store.hpp"

namespace bowline::store::testing {

void write_records_at(Db& db, int version);
void expect_records_intact(Store& store, int version);

// The committed fixture of version N (tests/data/store/schema-NN.sqlite), made by
// write_records_at; see upgrades_test.cpp for how to make the missing ones.
std::filesystem::path fixture_file(int version);

}  // namespace bowline::store::testing
