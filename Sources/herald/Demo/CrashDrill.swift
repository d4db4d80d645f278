import Foundation
import HeraldEvents

/// Runs `herald ingest --batch-size 1 --print-seqs` as a child process, feeds it events,
/// and SIGKILLs it after it acknowledged a number of them.
struct CrashDrill {
    let directory: String
    let account: String
    let firstSeq: UInt64

    struct Result {
        var pid: Int32
        var acknowledged: [UInt64]
    }

    init(directory: String, account: String, firstSeq: UInt64) throws {
        self.directory = directory
        self.account = account
        self.firstSeq = firstSeq
    }

    func run(killAfterAcks: Int) throws -> Result {
        // The feeder keeps writing after the kill: take EPIPE as an error, not a signal.
        signal(SIGPIPE, SIG_IGN)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["ingest", "--store", directory, "--format", "herald", "--batch-size", "1", "--print-seqs", "--quiet", "-"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Feed far more events than will be acknowledged; the writer dies mid-stream.
        let feeder = Thread { [account] in
            var text = ""
            for i in 0..<5_000 {
                let event = Event(account: account, .notify(.init(
                    chat: "chat:\(i % 7 + 100)", kind: .message, id: Int64(1_000 + i), date: 1_754_386_000 + Int64(i), title: "load", body: "message \(i)")))
                text += event.jsonString + "\n"
            }
            try? input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
            try? input.fileHandleForWriting.close()
        }
        feeder.start()
        var acknowledged: [UInt64] = []
        var pending = Data()
        let reader = output.fileHandleForReading
        while acknowledged.count < killAfterAcks {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            pending.append(chunk)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending.removeSubrange(pending.startIndex...newline)
                if line.hasPrefix("ack "), let seq = UInt64(line.dropFirst(4)) { acknowledged.append(seq) }
            }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return Result(pid: process.processIdentifier, acknowledged: acknowledged)
    }
}
