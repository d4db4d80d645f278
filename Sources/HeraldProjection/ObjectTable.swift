import HeraldEvents

/// A remembered reaction, call or secret chat object and its notification (0 when none was
/// created).
struct ObjectEntry: Hashable, Sendable {
    var id: Int64
    var notificationId: Int64
}

/// The reaction, call and secret chat identities a chat has seen (SEMANTICS §2), kept for as
/// long as the account lives so that duplicates stay duplicates.
///
/// One sorted array per class: 16 bytes per object and binary search, where a dictionary
/// spent about 60 bytes and a SipHash per lookup. Object ids mostly grow, so inserts append.
struct ObjectTable: Hashable, Sendable {
    private var reactions: [ObjectEntry] = []
    private var calls: [ObjectEntry] = []
    private var secretChats: [ObjectEntry] = []

    /// Creates an empty table.
    init() {}

    /// The number of objects remembered.
    var count: Int { reactions.count + calls.count + secretChats.count }

    @inline(__always)
    private static func lowerBound(_ list: [ObjectEntry], _ id: Int64) -> Int {
        if let last = list.last, last.id < id { return list.count }
        var low = 0
        var high = list.count
        while low < high {
            let mid = (low + high) >> 1
            if list[mid].id < id { low = mid + 1 } else { high = mid }
        }
        return low
    }

    @inline(__always)
    private static func find(_ list: [ObjectEntry], _ id: Int64) -> Int64? {
        let i = lowerBound(list, id)
        return i < list.count && list[i].id == id ? list[i].notificationId : nil
    }

    @inline(__always)
    private static func set(_ list: inout [ObjectEntry], _ id: Int64, _ notificationId: Int64) {
        let i = lowerBound(list, id)
        if i < list.count && list[i].id == id {
            list[i].notificationId = notificationId
        } else {
            list.insertOrAppend(ObjectEntry(id: id, notificationId: notificationId), at: i)
        }
    }

    /// The notification of object `key` (0 when none was created), or `nil` when the object
    /// was never named. Setting records the object; it cannot be forgotten.
    subscript(key: ObjectKey) -> Int64? {
        @inline(__always) get {
            switch key.objectClass {
            case .reaction: Self.find(reactions, key.id)
            case .call: Self.find(calls, key.id)
            case .secretChat: Self.find(secretChats, key.id)
            case .msg: nil
            }
        }
        set {
            guard let newValue else { return }
            switch key.objectClass {
            case .reaction: Self.set(&reactions, key.id, newValue)
            case .call: Self.set(&calls, key.id, newValue)
            case .secretChat: Self.set(&secretChats, key.id, newValue)
            case .msg: preconditionFailure("messages are not remembered here")
            }
        }
    }

    /// Every object with its notification, ascending by (class, id).
    var entries: [(key: ObjectKey, notificationId: Int64)] {
        reactions.map { (ObjectKey(objectClass: .reaction, id: $0.id), $0.notificationId) }
            + calls.map { (ObjectKey(objectClass: .call, id: $0.id), $0.notificationId) }
            + secretChats.map { (ObjectKey(objectClass: .secretChat, id: $0.id), $0.notificationId) }
    }
}
