// PrimFunc and IRModule helpers.
#include "tessera/ir/function.h"

#include <set>
#include <unordered_set>

#include "tessera/support/error.h"

namespace tessera {

Ref<PrimFuncNode> PrimFuncNode::Make(std::vector<Var> params,
                                     std::vector<std::pair<Var, Buffer>> buffer_map, Stmt body,
                                     DataType ret_type, AttrMap attrs, Span span) {
  if (!body) TESSERA_THROW_KIND(span, ErrorKind::kValue) << "function body must not be null";
  std::unordered_set<const VarNode*> param_set;
  param_set.reserve(params.size());
  for (const Var& p : params) param_set.insert(p.get());
  for (const auto& [param, buf] : buffer_map) {
    if (!param_set.count(param.get()) || !buf) {
      TESSERA_THROW_KIND(span, ErrorKind::kValue) << "buffer_map refers to a non-parameter";
    }
  }
  return std::make_shared<PrimFuncNode>(std::move(params), std::move(buffer_map), std::move(body),
                                        ret_type, std::move(attrs), std::move(span));
}

void PrimFuncNode::IndexBuffers() {
  if (buffer_map.size() <= 16) return;
  buffer_index_.reserve(buffer_map.size());
  for (size_t i = 0; i < buffer_map.size(); ++i) buffer_index_.emplace(buffer_map[i].first.get(), i);
}

Buffer PrimFuncNode::GetBuffer(const Var& param) const {
  if (!buffer_index_.empty()) {
    auto it = buffer_index_.find(param.get());
    if (it == buffer_index_.end()) return nullptr;
    if (it->second < buffer_map.size() && buffer_map[it->second].first == param) {
      return buffer_map[it->second].second;
    }
  }
  for (const auto& [p, b] : buffer_map) {
    if (p == param) return b;
  }
  return nullptr;
}

std::string PrimFuncNode::GetStrAttr(const std::string& key, const std::string& fallback) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return fallback;
  if (auto* s = AsPtr<StringImmNode>(it->second)) return s->value;
  return fallback;
}

int64_t PrimFuncNode::GetIntAttr(const std::string& key, int64_t fallback) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return fallback;
  if (auto* i = AsPtr<IntImmNode>(it->second)) return i->value;
  return fallback;
}

Ref<PrimFuncNode> PrimFuncNode::WithAttr(const std::string& key, ObjectRef value) const {
  AttrMap a = attrs;
  a[key] = std::move(value);
  return std::make_shared<PrimFuncNode>(params, buffer_map, body, ret_type, std::move(a), span);
}

Ref<PrimFuncNode> PrimFuncNode::WithBody(Stmt new_body) const {
  return std::make_shared<PrimFuncNode>(params, buffer_map, std::move(new_body), ret_type, attrs,
                                        span);
}

Ref<IRModuleNode> IRModuleNode::Make(std::vector<std::pair<GlobalVar, PrimFunc>> functions,
                                     AttrMap attrs) {
  std::set<std::string> names;
  for (const auto& [gv, f] : functions) {
    if (!gv || !f) TESSERA_THROW_KIND(Span(), ErrorKind::kValue) << "module entries must not be null";
    if (!names.insert(gv->name_hint).second) {
      TESSERA_THROW_KIND(f->span, ErrorKind::kValue)
          << "function '" << gv->name_hint << "' is defined twice in one module";
    }
  }
  return std::make_shared<IRModuleNode>(std::move(functions), std::move(attrs));
}

Ref<IRModuleNode> IRModuleNode::FromFunc(PrimFunc func, const std::string& name) {
  return Make({{GlobalVarNode::Make(name), std::move(func)}});
}

GlobalVar IRModuleNode::GetGlobalVar(const std::string& name) const {
  for (const auto& [gv, f] : functions) {
    if (gv->name_hint == name) return gv;
  }
  return nullptr;
}

PrimFunc IRModuleNode::Lookup(const std::string& name) const {
  for (const auto& [gv, f] : functions) {
    if (gv->name_hint == name) return f;
  }
  return nullptr;
}

PrimFunc IRModuleNode::Lookup(const GlobalVar& gv) const { return Lookup(gv->name_hint); }

Ref<IRModuleNode> IRModuleNode::WithFunction(const GlobalVar& gv, PrimFunc func) const {
  auto fns = functions;
  bool replaced = false;
  for (auto& entry : fns) {
    if (entry.first->name_hint == gv->name_hint) {
      entry.second = func;
      replaced = true;
    }
  }
  if (!replaced) fns.emplace_back(gv, func);
  return std::make_shared<IRModuleNode>(std::move(fns), attrs);
}

}  // namespace tessera
