// Trace JSON: written with nlohmann/json, read through support/json (ParseJson).
//   {"insts": [[kind, [[arg, value], ...], [output names]], ...],
//    "decisions": [[instruction index, value], ...]}
// A value is null, a bool, an int, a string, a list, {"float": x}, {"expr": e}, {"rv": name},
// {"dict": [[key, value], ...]} or
// {"index_map": {"vars": [[name, dtype], ...], "exprs": [e, ...]}}; an expression e is
// [kind, operands...] with ["Var", i] the i-th variable of its index map.
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/schedule/trace.h"
#include "tessera/support/error.h"
#include "trace_internal.h"

namespace tessera {
namespace schedule {
namespace {

using json = nlohmann::json;

json ExprToJSON(const Expr& e, const std::unordered_map<const VarNode*, int>& vars) {
  if (auto* i = AsPtr<IntImmNode>(e)) return json::array({"IntImm", i->dtype.ToString(), i->value});
  if (auto* f = AsPtr<FloatImmNode>(e)) {
    return json::array({"FloatImm", f->dtype.ToString(), f->value});
  }
  if (auto* v = AsPtr<VarNode>(e)) {
    auto it = vars.find(v);
    if (it == vars.end()) {
      TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
          << "cannot write the trace as JSON: it refers to the variable '" << v->name
          << "' of the program";
    }
    return json::array({"Var", it->second});
  }
  if (auto* c = AsPtr<CastNode>(e)) {
    return json::array({"Cast", c->dtype.ToString(), ExprToJSON(c->value, vars)});
  }
  if (auto* b = AsPtr<BinaryNode>(e)) {
    return json::array({NodeKindName(e->kind), ExprToJSON(b->a, vars), ExprToJSON(b->b, vars)});
  }
  if (auto* n = AsPtr<NotNode>(e)) return json::array({"Not", ExprToJSON(n->a, vars)});
  if (auto* s = AsPtr<SelectNode>(e)) {
    return json::array({"Select", ExprToJSON(s->condition, vars), ExprToJSON(s->true_value, vars),
                        ExprToJSON(s->false_value, vars)});
  }
  TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
      << "cannot write a " << NodeKindName(e->kind) << " expression in a trace as JSON";
}

Expr ExprFromJSON(const JsonValue& j, const std::vector<Var>& vars) {
  auto bad = [] {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue) << "malformed expression in trace JSON";
  };
  if (j.kind != JsonValue::kArray || j.array.empty() || j.array[0].kind != JsonValue::kString)
    bad();
  const std::string& k = j.array[0].string;
  const auto& a = j.array;
  if (k == "IntImm")
    return IntImmNode::Make(DataType::Parse(a.at(1).string), static_cast<int64_t>(a.at(2).number));
  if (k == "FloatImm") return FloatImmNode::Make(DataType::Parse(a.at(1).string), a.at(2).number);
  if (k == "Var") {
    size_t i = static_cast<size_t>(a.at(1).number);
    if (i >= vars.size()) bad();
    return vars[i];
  }
  if (k == "Cast")
    return CastNode::Make(DataType::Parse(a.at(1).string), ExprFromJSON(a.at(2), vars));
  if (k == "Not") return NotNode::Make(ExprFromJSON(a.at(1), vars));
  if (k == "Select") {
    return SelectNode::Make(ExprFromJSON(a.at(1), vars), ExprFromJSON(a.at(2), vars),
                            ExprFromJSON(a.at(3), vars));
  }
  if (a.size() != 3) bad();
  Expr x = ExprFromJSON(a[1], vars), y = ExprFromJSON(a[2], vars);
#define TESSERA_FROM_JSON(name) \
  if (k == #name) return name##Node::Make(x, y);
  TESSERA_BINARY_NODES(TESSERA_FROM_JSON)
#undef TESSERA_FROM_JSON
  bad();
  return nullptr;
}

json ValueToJSON(const TraceValue& v, RVNames* names) {
  switch (v.kind) {
    case TraceValue::kNone:
      return nullptr;
    case TraceValue::kBool:
      return v.boolean;
    case TraceValue::kInt:
      return v.integer;
    case TraceValue::kFloat:
      return {{"float", v.number}};
    case TraceValue::kString:
      return v.string;
    case TraceValue::kExpr:
      return {{"expr", ExprToJSON(v.expr, {})}};
    case TraceValue::kRV:
      return {{"rv", names->Name(v.rv)}};
    case TraceValue::kList: {
      json out = json::array();
      for (const TraceValue& item : v.list) out.push_back(ValueToJSON(item, names));
      return out;
    }
    case TraceValue::kIndexMap: {
      std::unordered_map<const VarNode*, int> vars;
      json names_json = json::array(), exprs = json::array();
      const IndexMap& m = *v.index_map;
      for (size_t i = 0; i < m.initial_indices.size(); ++i) {
        vars[m.initial_indices[i].get()] = static_cast<int>(i);
        names_json.push_back({m.initial_indices[i]->name, m.initial_indices[i]->dtype.ToString()});
      }
      for (const Expr& e : m.final_indices) exprs.push_back(ExprToJSON(e, vars));
      return {{"index_map", {{"vars", names_json}, {"exprs", exprs}}}};
    }
    case TraceValue::kDict: {
      json items = json::array();
      for (const auto& [key, value] : v.dict) items.push_back({key, ValueToJSON(value, names)});
      return {{"dict", items}};
    }
  }
  return nullptr;
}

}  // namespace

TraceValue ValueFromJSON(const JsonValue& j) {
  switch (j.kind) {
    case JsonValue::kNull:
      return TraceValue::None();
    case JsonValue::kBool:
      return TraceValue::Bool(j.boolean);
    case JsonValue::kNumber:
      return TraceValue::Int(static_cast<int64_t>(j.number));
    case JsonValue::kString:
      return TraceValue::Str(j.string);
    case JsonValue::kArray: {
      std::vector<TraceValue> items;
      for (const JsonValue& item : j.array) items.push_back(ValueFromJSON(item));
      return TraceValue::List(std::move(items));
    }
    case JsonValue::kObject: {
      if (j.object.count("float")) return TraceValue::Float(j["float"].number);
      if (j.object.count("expr")) return TraceValue::Of(ExprFromJSON(j["expr"], {}));
      if (j.object.count("rv")) {
        // A placeholder RV carrying its name; Replay maps it.
        TraceValue t = TraceValue::Str(j["rv"].string);
        t.kind = TraceValue::kRV;
        return t;
      }
      if (j.object.count("dict")) {
        std::vector<std::pair<std::string, TraceValue>> items;
        for (const JsonValue& kv : j["dict"].array)
          items.emplace_back(kv.array.at(0).string, ValueFromJSON(kv.array.at(1)));
        return TraceValue::Dict(std::move(items));
      }
      if (j.object.count("index_map")) {
        IndexMap m;
        for (const JsonValue& v : j["index_map"]["vars"].array) {
          m.initial_indices.push_back(
              VarNode::Make(v.array.at(0).string, DataType::Parse(v.array.at(1).string)));
        }
        for (const JsonValue& e : j["index_map"]["exprs"].array) {
          m.final_indices.push_back(ExprFromJSON(e, m.initial_indices));
        }
        return TraceValue::Map(std::move(m));
      }
      break;
    }
  }
  TESSERA_THROW_KIND(Span(), ErrorKind::kValue) << "malformed value in trace JSON";
}

std::string Trace::AsJSON() const {
  RVNames names;
  json insts_json = json::array(), decisions = json::array();
  for (size_t i = 0; i < insts.size(); ++i) {
    const Instruction& inst = insts[i];
    json args = json::array(), outputs = json::array();
    for (const auto& [key, value] : inst.args) args.push_back({key, ValueToJSON(value, &names)});
    for (const RV& out : inst.outputs) outputs.push_back(names.Name(out));
    insts_json.push_back({inst.kind, args, outputs});
  }
  for (size_t i = 0; i < insts.size(); ++i) {
    if (insts[i].decision.kind == TraceValue::kNone) continue;
    decisions.push_back({static_cast<int64_t>(i), ValueToJSON(insts[i].decision, &names)});
  }
  json doc = {{"insts", insts_json}, {"decisions", decisions}};
  return doc.dump();
}

}  // namespace schedule
}  // namespace tessera
