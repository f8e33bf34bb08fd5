// Plain-text tables for people: columns padded to their widest cell, a header
// row in capitals, as kubectl and squeue print them.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace tessera::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : rows_{std::move(header)} {}
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void Print(std::FILE* out = stdout) const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace tessera::cli
