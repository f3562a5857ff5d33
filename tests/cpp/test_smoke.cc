// Placeholder test so the C++ test executable always builds and runs.
#include <gtest/gtest.h>

#include <string>

TEST(Smoke, VersionDefined) { EXPECT_EQ(std::string(TESSERA_VERSION), "0.1.0"); }
