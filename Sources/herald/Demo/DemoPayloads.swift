import HeraldIngest

/// Real push payloads, as their services send them (copied from Tests/Fixtures/payloads, whose
/// README names each source), so that `herald demo` runs anywhere without the shared folder.
enum DemoPayloads {
    struct Sample {
        var format: String
        var title: String
        var payload: String
        var account: String?
    }

    /// The Telegram auth key of the encrypted sample (TDLib's test vector).
    static let telegramKey = "uBa5yu01a-nJJeqsR3yeqMs6fJLYXjecYzFcvS6jIwS3nefBIr95LWrTm-IbRBNDLrkISz1Sv0KYpDzhU8WFRk1D0V_qyO7XsbDPyrYxRBpGxofJUINSjb1uCxoSdoh1_F0UXEA2fWWKKVxL0DKUQssZfbVj3AbRglsWpH-jDK1oc6eBydRiS3i4j-H0yJkEMoKRgaF9NaYI4u26oIQ-Ez46kTVU-R7e3acdofOJKm7HIKan_5ZMg82Dvec2M6vc_I54Vs28iBx8IbBO1y5z9WSScgW3JCvFFKP2MXIu7Jow5-cpUx6jXdzwRUb9RDApwAFKi45zpv8eb3uPCDAmIQ"
    /// The push key the demo's Zulip client registered (`push_key_id:push_key`); its pushes
    /// were sealed with PyNaCl's SecretBox, as a Zulip server seals them.
    static let zulipPushKey = "2408:MQABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f"

    static let samples: [Sample] = [
        Sample(format: "telegram", title: "Telegram push, plain (the documented sample, trailing comma and all)", payload: #"""
{
"data": {
"loc_key": "CHAT_MESSAGE_CONTACT",
"loc_args": ["John Doe", "My magical group", "Contact Exchange"],
"user_id": 14124122,
"custom": {
"chat_id": 241233,
"msg_id": 123
},
"sound": "sound1.mp3",
}
}
"""#, account: "tg:14124122"),
        Sample(format: "telegram", title: "Telegram push, MTProto-encrypted (decrypted with the account's auth key)", payload: #"""
{"p":"JDgCsLElDihrUdQ7ZX3ruYU8NTA0XLoCzQdMw2uqij2GQmTuYuoaxTxRGhmPBo2TIXdPs_cwodHoyXogkV35uYtS7VxIM_QM04J0mfWvYZn3lKZVRthUA4hXQiZ7J_X32d0KAID9h3FvpF3WPTGAdZVGEc87nqOgxC5CLFC6IO_fejpJZWdCFXAYjpsY6jKkmSQtVu319em8PUbyvntZ_u3nwhcCG32OzLjxKY2KYsSmIfmF34fNl5ALZkbock6pNkdGkjOjbdKrBrSFmYO-CAlDMttJedQgcU9mRPuO4oWv4nloUWK_sJSSiwHXFroZVNvSxRtgWMg"}
"""#, account: "tg:14124122"),
        Sample(format: "zulip", title: "Zulip E2EE push, already decrypted: a channel message mentioning a group", payload: #"""
{"channel_id":10,"channel_name":"Denmark","content":"@test_user_group","mentioned_user_group_id":41,"mentioned_user_group_name":"test_user_group","message_id":45,"realm_name":"Zulip Dev","realm_url":"http://zulip.testserver","recipient_type":"channel","sender_avatar_url":"https://secure.gravatar.com/avatar/818c212b9f8830dfef491b3f7da99a14?d=identicon&version=1","sender_full_name":"aaron","sender_id":6,"time":1754385395,"topic":"test","type":"message","user_id":10}
"""#, account: nil),
        Sample(format: "zulip", title: "Zulip E2EE push: a direct message, sealed (opened with the client's push key)", payload: #"""
{"push_key_id":"2408","encrypted_data":"ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7iG4kfw+iIei2TbHILPmFmnmb+qZUwquHxN8ZtkPh0GweyVfJkMMlb4QgYPlv+LrpzwqrcSsVodDDOjUQZXKxCJ7+z3V3pAN9WZQ/bauS2gE1qWBPulkp5tTQaoAs4dexPOP5d53QVHjn9+BXVpKAtY66jAmZvEjlL1kN7t815VEdQeIVo1IwbGK2LMeNY7NfyiIhOkWrfmA9Sk5WqZaVJgZZqXZJVFAm8D+LQ1YU+MKtTh518fOgAvyEhlQG2ZSGiMOEQoyTSzh/WUT3MCltep9C8Sis216xSh2GRDhdLowLHxcZvXKUZrgs9FtOs8WocYKtjdX0iyWjL853MJgKtDNmtjNgxHD7ZICxoMNv258UxDd7CZRrKHnZkLumBFUoFldjN0jw0ccn0Jljpl8KpjVues+RH+WD1IL+zArbAJdYeAmysOyiqLx9HY+1GR9v99cHHZvsynAEyQqBqwTXD73n7WTnQxkcSJJdiDaB2H7AFCBTnZdGdG8XvPhQTQ=="}
"""#, account: nil),
        Sample(format: "apns", title: "APNs payload with a thread-id", payload: #"""
{"aps":{"alert":{"title":"Alice","body":"Are we still on for lunch?"},"thread-id":"message-Alice","sound":"default","badge":3,"mutable-content":1},"chat":"user:alice","message_id":881}
"""#, account: "apns:demo-phone"),
        Sample(format: "matrix", title: "Matrix push gateway notification", payload: #"""
{"notification":{"id":"$3957tyerfgewrf384","room_id":"!slw48wfj34rtnrf:example.com","event_id":"$qTOWWTEL48yPm3uT-gdNhFcoHxfKbZuqRVnnWWSkGBs","type":"m.room.message","sender":"@exampleuser:matrix.org","sender_display_name":"Major Tom","room_name":"Mission Control","room_alias":"#exampleroom:matrix.org","prio":"high","content":{"msgtype":"m.text","body":"I'm floating in a most peculiar way.","other":1},"counts":{"unread":2,"missed_calls":1},"devices":[{"app_id":"com.example.apns","pushkey":"spqr","pushkey_ts":42}]}}
"""#, account: "matrix:@tom:matrix.org"),
        Sample(format: "rongcloud", title: "RongCloud APNs push of a private message (the IM connection was down)", payload: #"""
{"aps":{"alert":{"title":"Ada","body":"lunch at noon?"},"badge":3,"sound":"default","category":"RC:TxtMsg","mutable-content":1,"thread-id":"u-ada"},"rc":{"cType":"PR","fId":"u-ada","oName":"RC:TxtMsg","tId":"u-me","id":"BPJK-E8N4-OAS4-O3RR","msgTime":1754385300123},"appData":""}
"""#, account: rongCloudAccount),
    ]

    /// The RongCloud account of the demo (`rc:<appKey>|<userId>`).
    static let rongCloudAccount = "rc:8luwapkvucoil|u-me"

    /// The same message as the RongCloud push, as the app's IM connection delivers it once
    /// it reconnects: a full notify of the same object, which upgrades the push's notification.
    static let rongCloudConnectionMessage = RongCloudMessage(
        conversationType: 1, targetId: "u-ada", senderUserId: "u-ada", messageUId: "BPJK-E8N4-OAS4-O3RR",
        objectName: "RC:TxtMsg", sentTime: 1_754_385_300_123, content: "lunch at noon? I booked the usual place", senderName: "Ada")
}
