// Trace printing: index maps and instructions as the Python lines of a schedule (TVM's form).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "tessera/ir/printer.h"
#include "tessera/schedule/trace.h"
#include "tessera/support/escape.h"
#include "trace_internal.h"

namespace tessera {
namespace schedule {

std::string IndexMap::AsPython() const {
  std::string text = "lambda ";
  for (size_t i = 0; i < initial_indices.size(); ++i)
    text += (i ? ", " : "") + initial_indices[i]->name;
  text += ": (";
  for (size_t i = 0; i < final_indices.size(); ++i)
    text += (i ? ", " : "") + AsScript(final_indices[i]);
  return text + (final_indices.size() == 1 ? ",)" : ")");
}

namespace {

std::string Quote(const std::string& s) { return tessera::Quote(s, QuoteStyle::kJson); }

// A float argument as TVM's Python form writes it: C++ stream output at 17 significant
// digits, so 1.0 reads "1" and 0.2 reads "0.20000000000000001".
std::string FloatText(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

// A float that Python reads back as a float: FloatText with ".0" where it would read as an
// integer ("0" -> "0.0"), float('inf') / float('nan') for the others.
std::string FloatLiteral(double v) {
  std::string text = FloatText(v);
  if (!std::isfinite(v)) return "float('" + text + "')";
  if (text.find_first_of(".eE") == std::string::npos) text += ".0";
  return text;
}

// ---- Python ----

class PythonPrinter {
 public:
  std::string Name(const RV& rv) { return names_.Name(rv); }

  std::string Value(const TraceValue& v) {
    switch (v.kind) {
      case TraceValue::kNone:
        return "None";
      case TraceValue::kBool:
        return v.boolean ? "True" : "False";
      case TraceValue::kInt:
        return std::to_string(v.integer);
      case TraceValue::kFloat:
        return FloatText(v.number);
      case TraceValue::kString:
        return Quote(v.string);
      case TraceValue::kExpr:
        return AsScript(v.expr);
      case TraceValue::kRV:
        return Name(v.rv);
      case TraceValue::kList: {
        std::string out = "[";
        for (size_t i = 0; i < v.list.size(); ++i) out += (i ? ", " : "") + Value(v.list[i]);
        return out + "]";
      }
      case TraceValue::kIndexMap:
        return v.index_map->AsPython();
      case TraceValue::kDict: {
        std::string out = "{";
        for (size_t i = 0; i < v.dict.size(); ++i)
          out += (i ? ", " : "") + Quote(v.dict[i].first) + ": " + Value(v.dict[i].second);
        return out + "}";
      }
    }
    return "None";
  }

  /*! \brief annotate_buffer_access's ranges as TVM prints them: a lambda of a list of
   *  (begin, end) pairs. */
  static std::string Ranges(const IndexMap& m) {
    std::string text = "lambda ";
    for (size_t i = 0; i < m.initial_indices.size(); ++i)
      text += (i ? ", " : "") + m.initial_indices[i]->name;
    text += ": [";
    for (size_t i = 0; i + 1 < m.final_indices.size(); i += 2) {
      text += (i ? ", (" : "(") + AsScript(m.final_indices[i]) + ", " +
              AsScript(m.final_indices[i + 1]) + ")";
    }
    return text + "]";
  }

  std::string Line(const Instruction& inst) {
    std::string call = "sch." + inst.kind + "(";
    for (size_t i = 0; i < inst.args.size(); ++i) {
      const auto& [key, value] = inst.args[i];
      // A (kind, index) buffer argument reads better as a tuple.
      std::string text = key == "gen_new_ranges" && value.kind == TraceValue::kIndexMap
                             ? Ranges(*value.index_map)
                             : Value(value);
      // A constant float pad value as a plain number (transform_layout gives it the buffer's
      // dtype), so that the printed trace replays without TVMScript's `T` in scope.
      if (key == "pad_value" && value.kind == TraceValue::kIndexMap &&
          value.index_map->final_indices.size() == 1) {
        if (auto* f = AsPtr<FloatImmNode>(value.index_map->final_indices[0])) {
          text = FloatLiteral(f->value);
        }
      }
      bool varargs = ((inst.kind == "fuse" || inst.kind == "merge") && key == "loops") ||
                     (inst.kind == "reorder" && key == "ordered_loops");
      if (varargs || (key == "buffer" && value.kind == TraceValue::kList)) {
        text = text.substr(1, text.size() - 2);
        if (!varargs) text = "(" + text + ")";
      }
      call += (i ? ", " : "") + (varargs ? text : key + "=" + text);
    }
    if (inst.decision.kind != TraceValue::kNone)
      call += (inst.args.empty() ? "decision=" : ", decision=") + Value(inst.decision);
    call += ")";
    if (inst.outputs.empty()) return inst.returns_list ? "_ = " + call : call;
    std::string lhs;
    for (size_t i = 0; i < inst.outputs.size(); ++i) lhs += (i ? ", " : "") + Name(inst.outputs[i]);
    if (inst.returns_list && inst.outputs.size() == 1) lhs += ",";  // TVM: "l1, = ..."
    return lhs + " = " + call;
  }

 private:
  RVNames names_;
};

}  // namespace

std::string Trace::AsPython() const {
  PythonPrinter printer;
  std::string out;
  for (const Instruction& inst : insts) out += printer.Line(inst) + "\n";
  return out;
}

}  // namespace schedule
}  // namespace tessera
