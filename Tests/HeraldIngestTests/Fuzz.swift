import Foundation
import HeraldEvents
import Testing
import HeraldTestSupport

@testable import HeraldIngest

/// Every adapter fed mutated samples, random bytes, huge strings and deep nesting: it must
/// never trap or hang, and must return either valid events or an ``IngestError`` that says
/// something. `HERALD_FUZZ_CASES` sets the cases per adapter (default 10 000);
/// `Tools/fuzz-ingest.sh` runs a million in release mode.
///
/// Serialized: its cases are CPU-bound, seconds each in a debug build, so one at a time holds
/// a thread of the cooperative pool (see `ExecutorTrait`).
@Suite("Fuzz", .serialized)
struct Fuzz {
    /// Cases per adapter.
    static let cases: Int = ProcessInfo.processInfo.environment["HERALD_FUZZ_CASES"].flatMap(Int.init) ?? 10_000
    /// The seed of the case stream; set `HERALD_FUZZ_SEED` to explore other streams.
    static let seed: UInt64 = ProcessInfo.processInfo.environment["HERALD_FUZZ_SEED"].flatMap(UInt64.init) ?? 0x4845_5241_4C44

    @Test(.timeLimit(.minutes(30)), arguments: PayloadFormat.allCases)
    func adapter(format: PayloadFormat) throws {
        let fixture = try Fixture(format: format)
        var random = SplitMix64(seed: Self.seed ^ UInt64(format.rawValue.hashValue & 0xFFFF) ^ UInt64(PayloadFormat.allCases.firstIndex(of: format)!) << 32)
        var failures: [String] = []
        var outcomes = (events: 0, errors: 0)
        // The pathological inputs first: each runs once per adapter.
        var inputs = fixture.pathological()
        inputs.reserveCapacity(Self.cases)
        var produced = inputs.count
        func check(_ input: [UInt8], format: PayloadFormat?, context: IngestContext) {
            do {
                let result = try Ingest.decode(input, format: format, context: context)
                for event in result.events {
                    do {
                        try event.validate()
                    } catch {
                        failures.append("invalid event \(event.jsonString): \(error)")
                    }
                }
                outcomes.events += 1
            } catch {
                if error.field.isEmpty && error.reason.isEmpty { failures.append("empty error for \(preview(input))") }
                outcomes.errors += 1
            }
        }
        for input in inputs { check(input, format: format, context: fixture.contexts[0]) }
        inputs.removeAll(keepingCapacity: true)
        while produced < Self.cases {
            let input = try fixture.mutant(&random)
            let context = fixture.contexts[Int(random.next() % UInt64(fixture.contexts.count))]
            check(input, format: format, context: context)
            if produced % 4 == 0 { check(input, format: nil, context: context) }
            produced += 1
            if failures.count > 20 { break }
        }
        if ProcessInfo.processInfo.environment["HERALD_FUZZ_VERBOSE"] != nil {
            print("fuzz \(format): \(produced) cases, \(outcomes.events) decoded, \(outcomes.errors) rejected")
        }
        #expect(failures.isEmpty, "\(failures.count) failures, first: \(failures.prefix(5))")
        // Mutation must still reach the adapters' success paths, not only the parser's errors.
        #expect(outcomes.events > 0, "no mutated \(format) payload decoded")
        #expect(outcomes.errors > 0)
    }

    /// The first bytes of an input, for failure messages.
    func preview(_ input: [UInt8]) -> String {
        String(decoding: input.prefix(120), as: UTF8.self).debugDescription + " (\(input.count) bytes)"
    }
}

/// The seeds and contexts of one adapter, and the mutations applied to them.
struct Fixture {
    let format: PayloadFormat
    var seeds: [[UInt8]] = []
    var contexts: [IngestContext] = []
    let telegramKey: TelegramKey
    let webPushKeys: WebPushKeys

    init(format: PayloadFormat) throws {
        self.format = format
        telegramKey = try Samples.telegramKey()
        webPushKeys = try Samples.webPushKeys()
        for (name, sampleFormat) in Samples.all where sampleFormat == format {
            seeds.append(try Samples.bytes(name))
        }
        switch format {
        case .herald:
            seeds += [
                #"{"type":"notify","account":"a","chat":"c","kind":"message","id":5,"date":7,"partial":true,"title":"t"}"#,
                #"{"type":"delete","account":"a","ids":[1,2,3]}"#,
                #"{"type":"options","account":"a","groupCountMax":3,"groupSizeMax":25}"#,
                #"{"type":"chatSettings","account":"a","chat":"c","muted":true}"#,
            ].map { Array($0.utf8) }
            contexts = [context(), context(account: "a")]
        case .telegram:
            seeds += try Samples.telegramPushes().flatMap { [Array($0.payload.utf8), Array($0.plaintext.utf8)] }
            seeds.append(Array(#"{"loc_key":"MESSAGE_DELETED","user_id":"1","custom":{"channel_id":"5","messages":"1,2"}}"#.utf8))
            seeds.append(Array(#"{"loc_key":"PHONE_CALL_REQUEST","user_id":"1","custom":{"from_id":"5","call_id":"9","edit_date":"3"}}"#.utf8))
            // Issue 24's forms: iOS flat fields, the VoIP call, secret and service pushes.
            seeds += [
                #"{"aps":{"alert":{"title":"A","subtitle":"s","body":"hi"},"r":1},"from_id":"5","msg_id":"9","topic_id":"2","topic_title":"T","silent":"1"}"#,
                #"{"aps":{"alert":{"loc-key":"CHAT_MESSAGE_TEXT","loc-args":["A","G","x"]}},"chat_id":"8","msg_id":"4"}"#,
                #"{"loc-key":"MESSAGE_DELETED","channel_id":"5","messages":"1,2"}"#,
                #"{"call_id":"6001","call_ah":"-7","from_id":"5","updates":"AA"}"#,
                #"{"loc_key":"ENCRYPTED_MESSAGE","loc_args":["A"],"custom":{"encryption_id":"31","random_id":"-8"}}"#,
                #"{"date":1754390000,"data":{"loc_key":"MESSAGE_ANNOUNCEMENT","message":"m","google.sent_time":"1754390000000","custom":{"announcement":"5"}}}"#,
                #"{"loc_key":"PHONE_CALL_MISSED","loc_args":["A"],"custom":{"from_id":"5","call_id":"9","msg_id":"3"}}"#,
                #"{"loc_key":"PINNED_TEXT","loc_args":["A","t","G"],"custom":{"chat_id":"8","msg_id":"4","chat_from_id":"11"}}"#,
            ].map { Array($0.utf8) }
            contexts = [context(telegramKeys: [telegramKey]), context(account: "tg:14124122", telegramKeys: [telegramKey])]
        case .zulip:
            seeds += [
                #"{"aps":{"alert":{"title":"t","subtitle":"s:","body":"b"},"badge":0},"zulip":{"realm_url":"https://z.example","user_id":7,"sender_id":1,"time":1,"recipient_type":"private","pm_users":"1,7,9","message_ids":[3]}}"#,
                #"{"aps":{"badge":0},"zulip":{"realm_url":"https://z.example","user_id":7,"event":"remove","zulip_message_ids":"3,4"}}"#,
            ].map { Array($0.utf8) }
            contexts = [context(), context(account: "zulip:https://zulip.example.com/|234")]
        case .apns, .fcm, .matrix:
            seeds += [
                #"{"aps":{"alert":{"loc-key":"MSG_FROM_USER_IN_ROOM_WITH_CONTENT","loc-args":["A","R","b"],"title-loc-key":"T"},"badge":1},"room_id":"!r","event_id":"$e","unread_count":1}"#,
                #"{"to":"t","collapse_key":"c","notification":{"body_loc_key":"K","body_loc_args":["a"]},"data":{"message_id":"5"}}"#,
                #"{"message":{"data":{"event_id":"$e","room_id":"!r","type":"m.call.hangup","content_call_id":"c","prio":"normal","unread":"1"}}}"#,
                #"{"room_id":"!r","event_id":"$e","type":"m.call.invite","content":{"call_id":"c"},"unread":2}"#,
                #"{"notification":{"event_id":"$e","room_id":"!r","type":"m.room.message","devices":[{"tweaks":{"highlight":true}}],"counts":{"unread":1}}}"#,
                MatrixReadsAndInvitesTests.synapseAllRead, MatrixReadsAndInvitesTests.invite,
            ].map { Array($0.utf8) }
            var withStrings = context(account: "a")
            withStrings.strings = LocalizedStrings(["K": "%1$@ %@ %%", "T": "%2$@"])
            contexts = [context(account: "a"), withStrings]
        case .rongcloud:
            seeds += RongCloudFixtures.all.map { Array($0.utf8) }
            contexts = [context(account: RongCloudFixtures.account)]
        case .webpush:
            let inner = Array(#"{"loc_key":"MESSAGE_TEXT","loc_args":["A","hi"],"custom":{"from_id":"5","msg_id":"9"},"user_id":"14124122"}"#.utf8)
            let body = try WebPushTests.encrypt(inner, to: webPushKeys)
            seeds = [try Samples.webPush("body"), body, Array(Base64URL.encode(body).utf8)]
            contexts = [
                context(webPush: webPushKeys, innerFormat: .telegram),
                context(account: "tg:14124122", webPush: webPushKeys, innerFormat: .telegram),
                context(account: "a", webPush: webPushKeys, innerFormat: .herald),
            ]
        }
    }

    /// Inputs that stress limits: random bytes, 1 MB strings, 100 000-deep nesting.
    func pathological() -> [[UInt8]] {
        let megabyte = [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20)
        var inputs: [[UInt8]] = [
            [], Array("{}".utf8), Array("null".utf8), Array("[]".utf8),
            [UInt8](repeating: UInt8(ascii: "["), count: 100_000),
            Array(String(repeating: "{\"a\":", count: 100_000).utf8),
            Array(String(repeating: "[{\"p\":", count: 50_000).utf8),
            Array("\"".utf8) + megabyte,
            Array("{\"loc_key\":\"".utf8) + megabyte + Array("\"}".utf8),
            megabyte,
            (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) },
        ]
        for seed in seeds {
            // A 1 MB string in place of the first string, and 100 000 brackets after the first colon.
            if let quote = seed.firstIndex(of: UInt8(ascii: "\"")) {
                inputs.append(Array(seed[...quote]) + megabyte + Array(seed[(quote + 1)...]))
            }
            if let colon = seed.firstIndex(of: UInt8(ascii: ":")) {
                inputs.append(Array(seed[...colon]) + [UInt8](repeating: UInt8(ascii: "["), count: 100_000) + Array(seed[(colon + 1)...]))
            }
        }
        return inputs
    }

    /// One case: about 40% structural mutants (valid JSON, see `Fuzz+Structure.swift`), 10%
    /// re-encrypted mutants for encrypted formats, 5% random bytes, the rest byte-level
    /// mutants (one to three stacked flips, truncations, insertions, deletions, splices).
    func mutant(_ random: inout SplitMix64) throws -> [UInt8] {
        let roll = random.next() % 20
        if roll == 0 {
            return (0..<Int(random.next() % 512)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        }
        if roll <= 8, let mutant = structuralMutant(&random) { return mutant }
        if roll <= 10, let mutant = try encryptedMutant(&random, telegramKey: telegramKey, webPushKeys: webPushKeys) {
            return mutant
        }
        var bytes = seeds[Int(random.next() % UInt64(seeds.count))]
        for _ in 0..<(random.next() % 2 == 0 ? 1 : 1 + Int(random.next() % 3)) {
            mutate(&bytes, &random)
        }
        return bytes
    }

    /// Characters that move a JSON parser between states.
    static let interesting = Array("{}[],:\"\\0123456789-.eEtfn \u{7F}".utf8) + [0, 0x80, 0xC3, 0xFF]
    /// Tokens that land on adapter branches.
    static let tokens = [
        "\"1\"", "0", "-1", "9223372036854775808", "null", "true", "[]", "{}", "\"\"", "1e5",
        "\"loc_key\"", "\"custom\"", "\"msg_id\"", "\"READ_HISTORY\"", "\"MESSAGE_DELETED\"", "\"SESSION_REVOKE\"",
        "\"type\"", "\"remove\"", "\"message\"", "\"aps\"", "\"alert\"", "\"event_id\"", "\"data\"", ",", ":",
    ].map { Array($0.utf8) }

    func mutate(_ bytes: inout [UInt8], _ random: inout SplitMix64) {
        func position() -> Int { bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count + 1)) }
        switch random.next() % 8 {
        case 0:  // flip bits of one byte
            if !bytes.isEmpty { bytes[Int(random.next() % UInt64(bytes.count))] ^= UInt8(truncatingIfNeeded: random.next() | 1) }
        case 1:  // truncate
            bytes.removeSubrange(position()...)
        case 2:  // insert a structural character
            bytes.insert(Self.interesting[Int(random.next() % UInt64(Self.interesting.count))], at: position())
        case 3:  // insert random bytes
            let count = Int(random.next() % 8) + 1
            bytes.insert(contentsOf: (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }, at: position())
        case 4:  // delete a range
            let start = position()
            let end = min(bytes.count, start + Int(random.next() % 16))
            bytes.removeSubrange(start..<end)
        case 5:  // duplicate a range
            let start = position()
            let end = min(bytes.count, start + Int(random.next() % 32))
            bytes.insert(contentsOf: bytes[start..<end], at: position())
        case 6:  // insert a token
            bytes.insert(contentsOf: Self.tokens[Int(random.next() % UInt64(Self.tokens.count))], at: position())
        default:  // splice another seed's tail
            let other = seeds[Int(random.next() % UInt64(seeds.count))]
            let cut = other.isEmpty ? 0 : Int(random.next() % UInt64(other.count))
            bytes.replaceSubrange(position()..., with: other[cut...])
        }
    }
}

