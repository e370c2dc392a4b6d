// SPDX-License-Identifier: MIT
// parseYaml against PyYAML's safe_load (Debian's python3-yaml), the loader under OmegaConf, which
// writes NeMo's configs: the same documents must give the same values. Then what PyYAML does not
// decide for us (OmegaConf's dot-less floats) and the limits that keep a hostile file bounded.
#include "ckpt/formats/python_json.h"
#include "ckpt/formats/yaml_json.h"
#include "ckpt/io/errors.h"

#include <QProcess>
#include <QtTest>

#include <cmath>

using ckpt::parseYaml;

namespace {

// What PyYAML's safe loader makes of the first document of `text`, as JSON (NaN and infinities as Python's json writes them,
// compared by hand below).
nlohmann::json pyyaml(const std::string& text)
{
    QProcess p;
    p.start(QStringLiteral(CKPT_PYTHON),
            {QStringLiteral("-c"), QStringLiteral("import sys, json, yaml; print(json.dumps(next(iter(yaml.safe_load_all(sys.stdin.read())), None)))")});
    p.write(QByteArray::fromStdString(text));
    p.closeWriteChannel();
    if (!p.waitForFinished(60000) || p.exitCode() != 0) {
        qWarning("python3 -c yaml.safe_load failed: %s", p.readAllStandardError().constData());
        return "python failed";
    }
    return ckpt::parsePythonJson(p.readAllStandardOutput().toStdString());
}

// Equal as values: numbers compared as doubles (PyYAML's 2 and our 2u are one), NaN equal to NaN.
bool sameValue(const nlohmann::json& a, const nlohmann::json& b)
{
    if (a.is_number() && b.is_number()) {
        const double x = a.get<double>(), y = b.get<double>();
        return x == y || (std::isnan(x) && std::isnan(y));
    }
    if (a.type() != b.type() || a.size() != b.size())
        return false;
    if (a.is_object()) {
        for (const auto& [k, v] : a.items()) {
            if (!b.contains(k) || !sameValue(v, b[k]))
                return false;
        }
        return true;
    }
    if (a.is_array()) {
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (!sameValue(a[i], b[i]))
                return false;
        }
        return true;
    }
    return a == b;
}

} // namespace

class TestYaml : public QObject {
    Q_OBJECT
private slots:
    void matchesPyYaml_data();
    void matchesPyYaml();
    void omegaconfFloats();
    void emptyAndErrors();
    void aliasExpansionIsBounded();
    void nestingIsBounded();
};

void TestYaml::matchesPyYaml_data()
{
    QTest::addColumn<QByteArray>("text");
    // The shape OmegaConf.to_yaml gives a NeMo MegatronGPTModel config (model_config.yaml).
    QTest::newRow("nemo model_config") << QByteArray(
        "micro_batch_size: 4\nglobal_batch_size: 8\ntensor_model_parallel_size: 2\npipeline_model_parallel_size: 1\n"
        "encoder_seq_length: 512\nmax_position_embeddings: ${.encoder_seq_length}\nnum_layers: 12\nhidden_size: 768\n"
        "ffn_hidden_size: 3072\nnum_attention_heads: 12\ninit_method_std: 0.02\nhidden_dropout: 0.1\nprecision: bf16\n"
        "apply_query_key_layer_scaling: true\nkv_channels: null\ntokenizer:\n  library: megatron\n  type: GPT2BPETokenizer\n"
        "  model: null\n  vocab_file: nemo:abc_vocab.json\noptim:\n  name: fused_adam\n  lr: 0.0002\n  weight_decay: 0.01\n"
        "  betas:\n  - 0.9\n  - 0.98\n  sched:\n    name: CosineAnnealing\n    warmup_steps: 500\n    constant_steps: 50000\n"
        "    min_lr: 2.0e-05\ntarget: nemo.collections.nlp.models.language_modeling.megatron_gpt_model.MegatronGPTModel\n"
        "nemo_version: 1.23.0\n");
    QTest::newRow("scalars") << QByteArray(
        "a: ~\nb: null\nc: yes\nd: Off\ne: 0x1F\nf: 0o17\ng: -12_000\nh: 1.5\ni: .inf\nj: -.Inf\nk: .nan\nl: '12'\n"
        "m: \"true\"\nn: 012\no: 3.\np: +7\nq: hello world\nr: 1.0e+3\ns: 0b101\nt:\nu: 18446744073709551615\n");
    QTest::newRow("flow and block styles") << QByteArray(
        "list: [1, two, {three: 3}]\nmap: {x: 1, y: [a, b]}\nblock: |\n  line one\n  line two\nfolded: >\n  one\n  two\n"
        "nested:\n  - name: a\n    vals: [1, 2]\n  - name: b\n    vals: []\n");
    QTest::newRow("anchors and merge-free aliases") << QByteArray("base: &b {lr: 0.1, wd: 0.0}\ncopy: *b\nlist: [*b, *b]\n");
    QTest::newRow("top-level list") << QByteArray("- 1\n- [2, 3]\n- {a: b}\n");
    QTest::newRow("several documents: the first") << QByteArray("---\na: 1\n---\nb: 2\n");
    QTest::newRow("lightning hparams") << QByteArray(
        "cfg:\n  num_layers: 2\n  hidden_size: 64\n  optim:\n    name: adamw\n    lr: 0.001\n");
}

void TestYaml::matchesPyYaml()
{
    QFETCH(QByteArray, text);
    const nlohmann::json ours = parseYaml(text.toStdString());
    const nlohmann::json theirs = pyyaml(text.toStdString());
    if (!sameValue(ours, theirs))
        QFAIL(qPrintable(QStringLiteral("ours: %1\nPyYAML: %2").arg(QString::fromStdString(ours.dump()), QString::fromStdString(theirs.dump()))));
}

// OmegaConf reads "1e-4" as a float (omegaconf/_utils.py get_yaml_loader adds a float resolver that
// needs no dot); PyYAML 6's YAML 1.1 resolver keeps it a string. NeMo configs are OmegaConf's.
void TestYaml::omegaconfFloats()
{
    const nlohmann::json j = parseYaml("lr: 1e-4\nmin_lr: 2E+5\nname: e5\n");
    QVERIFY(j["lr"].is_number_float());
    QCOMPARE(j["lr"].get<double>(), 1e-4);
    QCOMPARE(j["min_lr"].get<double>(), 2e5);
    QVERIFY(j["name"].is_string());
}

void TestYaml::emptyAndErrors()
{
    QVERIFY(parseYaml("").is_null());
    QVERIFY(parseYaml("# only a comment\n").is_null());
    try {
        parseYaml("a: [1, 2\nb: 3\n");
        QFAIL("an unclosed flow sequence parsed");
    } catch (const ckpt::FormatError& e) {
        QVERIFY2(std::string(e.what()).find("line") != std::string::npos, e.what());
    }
    try {
        parseYaml("a: *nowhere\n");
        QFAIL("an undefined alias parsed");
    } catch (const ckpt::FormatError& e) {
        QVERIFY2(std::string(e.what()).find("nowhere") != std::string::npos, e.what());
    }
    // A mapping or sequence as a key: PyYAML's safe_load refuses it ("found unhashable key"), and so
    // does parseYaml (dumped into key text, nested ones once grew exponentially: fuzz regression
    // nested-flow-mapping-keys.yaml). Scalar keys of other types stay their text.
    for (const char* text : {"{a: 1}: x\n", "? [1, 2]\n: x\n", "cfg: {{{k: v}: w}: z}\n"}) {
        try {
            parseYaml(text);
            QFAIL(qPrintable(QStringLiteral("a non-scalar key parsed: ") + QString::fromUtf8(text)));
        } catch (const ckpt::FormatError& e) {
            QVERIFY2(std::string(e.what()).find("unhashable key") != std::string::npos, e.what());
        }
    }
    QCOMPARE(parseYaml("1: a\ntrue: b\n").dump(), std::string(R"({"1":"a","true":"b"})"));
}

// "Billion laughs": each level refers to the one before nine times; the expansion would be 9^9 values.
void TestYaml::aliasExpansionIsBounded()
{
    std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n";
    for (int i = 1; i <= 9; ++i) {
        const std::string prev = "*a" + std::to_string(i - 1);
        text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev;
        for (int k = 1; k < 9; ++k)
            text += ", " + prev;
        text += "]\n";
    }
    QVERIFY_THROWS_EXCEPTION(ckpt::LimitError, parseYaml(text));
    // Within the budget the same structure is built in full.
    ckpt::YamlLimits small;
    const nlohmann::json ok = parseYaml("a: &a [1, 2]\nb: [*a, *a]\n", small);
    QCOMPARE(ok["b"][1][1].get<int>(), 2);
}

void TestYaml::nestingIsBounded()
{
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    QVERIFY_THROWS_EXCEPTION(ckpt::LimitError, parseYaml(deep));
    ckpt::YamlLimits limits;
    limits.maxDepth = 3;
    QVERIFY_THROWS_EXCEPTION(ckpt::LimitError, parseYaml("a: {b: {c: {d: 1}}}", limits));
    QCOMPARE(parseYaml("a: {b: {c: 1}}", limits)["a"]["b"]["c"].get<int>(), 1);
}

QTEST_GUILESS_MAIN(TestYaml)
#include "tst_yaml.moc"
