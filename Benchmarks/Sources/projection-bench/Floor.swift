// The floor: the least work any projection of this workload must do per event, measured
// on the same events as Herald's replay, so that the two figures can be compared within one
// run of a machine whose speed drifts.
//
// Whatever its layout, a projection must find the event's account and chat by name, keep a
// new notification's title and texts (every state and update shows them), keep a record of
// the notification in its chat, and drop those records when the chat is read. The floor does
// exactly that and nothing else: no duplicate, read or deleted check, no unread counts, no
// groups, no visible view, no dismissals, deletes, settings or options. It is a lower bound
// of the cost, not a projection.
//
// Its state is as small as that work allows: names in open-addressing tables of 8-byte
// hashes (FNV-1a), one 24-byte record per chat, 24-byte notification records on a free list,
// and texts in a 64 KiB ring per account (6.4 MB over 100 accounts, about the live texts of
// Herald's own pages on this workload).

import HeraldEvents

/// Names interned to dense indexes, by FNV-1a hash with linear probing.
struct FloorNames {
    private var hashes = [UInt64](repeating: 0, count: 64)
    private var indexes = [Int32](repeating: -1, count: 64)
    private var names: [String] = []

    /// The index of `name`, adding it when new; `isNew` tells which.
    mutating func intern(_ name: String) -> (index: Int, isNew: Bool) {
        var copy = name
        let hash = copy.withUTF8 { bytes in
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01b3
            }
            return hash | 1  // 0 marks an empty slot
        }
        let mask = hashes.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while hashes[slot] != 0 {
            if hashes[slot] == hash && names[Int(indexes[slot])] == name { return (Int(indexes[slot]), false) }
            slot = (slot + 1) & mask
        }
        hashes[slot] = hash
        indexes[slot] = Int32(names.count)
        names.append(name)
        if names.count * 2 > hashes.count { grow() }
        return (names.count - 1, true)
    }

    private mutating func grow() {
        let old = names
        hashes = [UInt64](repeating: 0, count: hashes.count * 2)
        indexes = [Int32](repeating: -1, count: hashes.count)
        names = []
        for name in old { _ = intern(name) }
    }
}

/// One chat: the highest id read and its notification records, oldest first.
struct FloorChat {
    var readMaxId: Int64 = 0
    var first: Int32 = -1
    var last: Int32 = -1
    var count: Int32 = 0
}

/// One notification: its id, date, texts and the next record of its chat (or free list).
struct FloorNotification {
    var id: Int64
    var date: Int64
    var textsAt: Int32
    var next: Int32
}

/// One account's floor state.
struct FloorAccount {
    static let ringSize = 1 << 16

    var chatNames = FloorNames()
    var chats: [FloorChat] = []
    var notifications: [FloorNotification] = []
    var firstFree: Int32 = -1
    var nextId: Int64 = 1
    var texts = [UInt8](repeating: 0, count: ringSize)
    var textsEnd = 0

    /// The index of chat `name`, adding it when new.
    mutating func chat(_ name: String) -> Int {
        let (index, isNew) = chatNames.intern(name)
        if isNew { chats.append(FloorChat()) }
        return index
    }

    /// Copies `bytes` to the ring and returns where they start.
    mutating func keep(_ bytes: UnsafeBufferPointer<UInt8>) -> Int32 {
        if textsEnd + bytes.count > Self.ringSize { textsEnd = 0 }
        let start = textsEnd
        texts.withUnsafeMutableBufferPointer { ring in
            UnsafeMutableRawPointer(ring.baseAddress! + start).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        }
        textsEnd += bytes.count
        return Int32(start)
    }
}

/// The floor over many accounts (see the top of this file).
struct Floor {
    private var accountNames = FloorNames()
    private var accounts: [FloorAccount] = []
    /// Stands for a notification's packed body, sender and thread (the workload's bodies are
    /// 40-odd bytes; `PackedTexts`' bytes are not visible outside the Herald package).
    private let body = [UInt8](repeating: 0x61, count: 44)

    @inline(never)  // one symbol to count instructions on (valgrind --toggle-collect)
    mutating func apply(_ event: Event) {
        let (account, isNew) = accountNames.intern(event.account)
        if isNew { accounts.append(FloorAccount()) }
        accounts.withUnsafeMutableBufferPointer { accounts in
            switch event.payload {
            case .notify(let notify):
                let chat = accounts[account].chat(notify.chat)
                guard notify.id > accounts[account].chats[chat].readMaxId else { return }
                var title = notify.title ?? ""
                let textsAt = title.withUTF8 { accounts[account].keep($0) }
                body.withUnsafeBufferPointer { _ = accounts[account].keep($0) }
                let record = FloorNotification(id: accounts[account].nextId, date: notify.date, textsAt: textsAt, next: -1)
                accounts[account].nextId += 1
                let slot: Int32
                if accounts[account].firstFree >= 0 {
                    slot = accounts[account].firstFree
                    accounts[account].firstFree = accounts[account].notifications[Int(slot)].next
                    accounts[account].notifications[Int(slot)] = record
                } else {
                    slot = Int32(accounts[account].notifications.count)
                    accounts[account].notifications.append(record)
                }
                let last = accounts[account].chats[chat].last
                if last >= 0 {
                    accounts[account].notifications[Int(last)].next = slot
                } else {
                    accounts[account].chats[chat].first = slot
                }
                accounts[account].chats[chat].last = slot
                accounts[account].chats[chat].count += 1
            case .read(let chatName, let maxId):
                let chat = accounts[account].chat(chatName)
                accounts[account].chats[chat].readMaxId = max(maxId, accounts[account].chats[chat].readMaxId)
                var next = accounts[account].chats[chat].first
                while next >= 0 {
                    let following = accounts[account].notifications[Int(next)].next
                    accounts[account].notifications[Int(next)].next = accounts[account].firstFree
                    accounts[account].firstFree = next
                    next = following
                }
                accounts[account].chats[chat] = FloorChat(readMaxId: accounts[account].chats[chat].readMaxId)
            default:
                break
            }
        }
    }

    /// The notification records held, for a check that the work was done.
    var held: Int { accounts.reduce(0) { $0 + Int($1.chats.reduce(0) { $0 + $1.count }) } }
}
