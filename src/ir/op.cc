// The Op registry.
#include "tessera/ir/op.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "tessera/support/error.h"

namespace tessera {
namespace {

struct OpTable {
  std::mutex mu;
  std::unordered_map<std::string, Op> ops;
};

OpTable& Table() {
  static OpTable* table = new OpTable();
  return *table;
}

// Edit distance, for "did you mean" suggestions.
size_t Distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t prev = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cur = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1)});
      prev = cur;
    }
  }
  return row[b.size()];
}

}  // namespace

Op OpNode::Get(const std::string& name) {
  auto& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.ops.find(name);
  if (it != t.ops.end()) return it->second;
  std::string best;
  size_t best_d = 4;
  for (const auto& [n, op] : t.ops) {
    size_t d = Distance(n, name);
    if (d < best_d) best_d = d, best = n;
  }
  auto thrower = TESSERA_THROW_KIND(Span(), ErrorKind::kAttribute);
  thrower << "unknown intrinsic '" << name << "'";
  if (!best.empty()) thrower << "; did you mean '" << best << "'?";
}

bool OpNode::Exists(const std::string& name) {
  auto& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  return t.ops.count(name) != 0;
}

std::vector<std::string> OpNode::ListNames() {
  auto& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  std::vector<std::string> names;
  for (const auto& [n, op] : t.ops) names.push_back(n);
  std::sort(names.begin(), names.end());
  return names;
}

std::string OpNode::GetStrAttr(const std::string& key, const std::string& fallback) const {
  auto it = str_attrs.find(key);
  return it == str_attrs.end() ? fallback : it->second;
}

OpRegEntry::OpRegEntry(const std::string& name) {
  auto& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.ops.find(name);
  if (it != t.ops.end()) throw InternalError("op '" + name + "' registered twice");
  op_ = std::make_shared<OpNode>(name);
  t.ops.emplace(name, op_);
}

OpRegEntry& OpRegEntry::set_num_inputs(int n) {
  op_->num_inputs = n;
  return *this;
}
OpRegEntry& OpRegEntry::set_effect(CallEffect e) {
  op_->effect = e;
  return *this;
}
OpRegEntry& OpRegEntry::describe(const std::string& text) {
  op_->description = text;
  return *this;
}
OpRegEntry& OpRegEntry::set_lowering(const std::string& target, FLowerIntrinsic f) {
  op_->lowering[target] = std::move(f);
  return *this;
}
OpRegEntry& OpRegEntry::set_attr(const std::string& key, const std::string& value) {
  op_->str_attrs[key] = value;
  return *this;
}

}  // namespace tessera
