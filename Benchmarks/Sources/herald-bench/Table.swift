import Foundation

/// One row of the results table: a target of `Benchmarks/Baselines/README.md`.
struct Row {
    var what: String
    var herald: String
    var baseline: String
    var ratio: String
    var target: String
    var verdict: String

    /// A row judged by a ratio against a baseline measured in the same run.
    static func ratio(
        _ what: String, herald: Double, baseline: Double, baselineName: String,
        unit: (Double) -> String = \.rate, atLeast: Double, targetText: String
    ) -> Row {
        let ratio = herald / baseline
        return Row(
            what: what, herald: unit(herald), baseline: "\(unit(baseline)) \(baselineName)",
            ratio: String(format: "%.2f×", ratio), target: targetText,
            verdict: ratio >= atLeast ? "pass" : "short")
    }

    /// A row that could not be measured, with why.
    static func unavailable(_ what: String, target: String, why: String) -> Row {
        Row(what: what, herald: "n/a (\(why))", baseline: "—", ratio: "—", target: target, verdict: "n/a")
    }
}

/// Prints rows as an aligned Markdown table.
func printTable(_ rows: [Row]) {
    let header = Row(what: "target row", herald: "Herald", baseline: "baseline (same run)", ratio: "ratio", target: "target", verdict: "result")
    let all = [header] + rows
    let columns: [(Row) -> String] = [\.what, \.herald, \.baseline, \.ratio, \.target, \.verdict]
    let widths = columns.map { column in all.map { column($0).count }.max() ?? 0 }
    func line(_ row: Row) -> String {
        "| " + zip(columns, widths).map { column, width in
            let text = column(row)
            return text + String(repeating: " ", count: width - text.count)
        }.joined(separator: " | ") + " |"
    }
    print(line(header))
    print("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|")
    for row in rows { print(line(row)) }
}
