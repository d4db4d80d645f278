// herald-workload: prints a seeded, deterministic workload as canonical JSONL on stdout.
//
//   herald-workload --events N [--seed S] [--accounts A] [--chats C]
//
// The defaults are those of the benchmarks: 100 accounts, 10 000 chats, a fixed seed.

import Foundation
import HeraldEvents
import HeraldWorkload

func usage() -> Never {
    FileHandle.standardError.write(Data("usage: herald-workload --events N [--seed S] [--accounts A] [--chats C]\n".utf8))
    exit(2)
}

var events = -1
var configuration = Workload.Configuration()
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    guard let value = arguments.popFirst() else { usage() }
    switch flag {
    case "--events": events = Int(value) ?? -1
    case "--seed": configuration.seed = UInt64(value) ?? { usage() }()
    case "--accounts": configuration.accounts = Int(value) ?? { usage() }()
    case "--chats": configuration.chats = Int(value) ?? { usage() }()
    default: usage()
    }
}
guard events >= 0, configuration.accounts > 0, configuration.chats >= configuration.accounts else { usage() }

var workload = Workload(configuration)
var buffer: [UInt8] = []
buffer.reserveCapacity(1 << 20)
for _ in 0..<events {
    buffer.append(contentsOf: workload.next().jsonString.utf8)
    buffer.append(UInt8(ascii: "\n"))
    if buffer.count >= 1 << 20 {
        FileHandle.standardOutput.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }
}
FileHandle.standardOutput.write(Data(buffer))
