from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ProtocolVersion(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PROTOCOL_VERSION_UNSPECIFIED: _ClassVar[ProtocolVersion]
    PROTOCOL_VERSION: _ClassVar[ProtocolVersion]

class Game(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GAME_UNSPECIFIED: _ClassVar[Game]
    STOP_THE_BUS: _ClassVar[Game]
    BASTARD_BRAG: _ClassVar[Game]

class Suit(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SUIT_UNSPECIFIED: _ClassVar[Suit]
    CLUBS: _ClassVar[Suit]
    DIAMONDS: _ClassVar[Suit]
    HEARTS: _ClassVar[Suit]
    SPADES: _ClassVar[Suit]

class ActionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACTION_KIND_UNSPECIFIED: _ClassVar[ActionKind]
    DRAW: _ClassVar[ActionKind]
    TAKE: _ClassVar[ActionKind]
    DISCARD: _ClassVar[ActionKind]
    STOP: _ClassVar[ActionKind]
    PASS: _ClassVar[ActionKind]
    EXCHANGE: _ClassVar[ActionKind]
    EXCHANGE_ALL: _ClassVar[ActionKind]
    KNOCK: _ClassVar[ActionKind]

class Phase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PHASE_UNSPECIFIED: _ClassVar[Phase]
    NORMAL: _ClassVar[Phase]
    FINAL: _ClassVar[Phase]
    OVER: _ClassVar[Phase]

class EventKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EVENT_KIND_UNSPECIFIED: _ClassVar[EventKind]
    DEAL: _ClassVar[EventKind]
    DRAW_STOCK: _ClassVar[EventKind]
    TAKE_DISCARD: _ClassVar[EventKind]
    DISCARDED: _ClassVar[EventKind]
    STOPPED: _ClassVar[EventKind]
    PASSED: _ClassVar[EventKind]
    RECYCLE: _ClassVar[EventKind]
    EXCHANGED: _ClassVar[EventKind]
    EXCHANGED_ALL: _ClassVar[EventKind]
    KNOCKED: _ClassVar[EventKind]
    STOCK_EXHAUSTED: _ClassVar[EventKind]
    TURN_LIMIT: _ClassVar[EventKind]
    SHOWDOWN: _ClassVar[EventKind]
    ELIMINATED: _ClassVar[EventKind]
    FORFEITED: _ClassVar[EventKind]
    GAME_OVER: _ClassVar[EventKind]
PROTOCOL_VERSION_UNSPECIFIED: ProtocolVersion
PROTOCOL_VERSION: ProtocolVersion
GAME_UNSPECIFIED: Game
STOP_THE_BUS: Game
BASTARD_BRAG: Game
SUIT_UNSPECIFIED: Suit
CLUBS: Suit
DIAMONDS: Suit
HEARTS: Suit
SPADES: Suit
ACTION_KIND_UNSPECIFIED: ActionKind
DRAW: ActionKind
TAKE: ActionKind
DISCARD: ActionKind
STOP: ActionKind
PASS: ActionKind
EXCHANGE: ActionKind
EXCHANGE_ALL: ActionKind
KNOCK: ActionKind
PHASE_UNSPECIFIED: Phase
NORMAL: Phase
FINAL: Phase
OVER: Phase
EVENT_KIND_UNSPECIFIED: EventKind
DEAL: EventKind
DRAW_STOCK: EventKind
TAKE_DISCARD: EventKind
DISCARDED: EventKind
STOPPED: EventKind
PASSED: EventKind
RECYCLE: EventKind
EXCHANGED: EventKind
EXCHANGED_ALL: EventKind
KNOCKED: EventKind
STOCK_EXHAUSTED: EventKind
TURN_LIMIT: EventKind
SHOWDOWN: EventKind
ELIMINATED: EventKind
FORFEITED: EventKind
GAME_OVER: EventKind

class Card(_message.Message):
    __slots__ = ("rank", "suit")
    RANK_FIELD_NUMBER: _ClassVar[int]
    SUIT_FIELD_NUMBER: _ClassVar[int]
    rank: int
    suit: Suit
    def __init__(self, rank: _Optional[int] = ..., suit: _Optional[_Union[Suit, str]] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("kind", "card", "slot")
    KIND_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    SLOT_FIELD_NUMBER: _ClassVar[int]
    kind: ActionKind
    card: Card
    slot: int
    def __init__(self, kind: _Optional[_Union[ActionKind, str]] = ..., card: _Optional[_Union[Card, _Mapping]] = ..., slot: _Optional[int] = ...) -> None: ...

class TimeLimits(_message.Message):
    __slots__ = ("move_time_ms", "time_bank_ms")
    MOVE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    move_time_ms: int
    time_bank_ms: int
    def __init__(self, move_time_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ...) -> None: ...

class HandshakeRequest(_message.Message):
    __slots__ = ("protocol_version", "referee_version", "game", "num_players", "time_limits", "turn_limit")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    REFEREE_VERSION_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    TIME_LIMITS_FIELD_NUMBER: _ClassVar[int]
    TURN_LIMIT_FIELD_NUMBER: _ClassVar[int]
    protocol_version: ProtocolVersion
    referee_version: str
    game: Game
    num_players: int
    time_limits: TimeLimits
    turn_limit: int
    def __init__(self, protocol_version: _Optional[_Union[ProtocolVersion, str]] = ..., referee_version: _Optional[str] = ..., game: _Optional[_Union[Game, str]] = ..., num_players: _Optional[int] = ..., time_limits: _Optional[_Union[TimeLimits, _Mapping]] = ..., turn_limit: _Optional[int] = ...) -> None: ...

class HandshakeReply(_message.Message):
    __slots__ = ("protocol_version", "games", "name", "version", "author")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    protocol_version: ProtocolVersion
    games: _containers.RepeatedScalarFieldContainer[Game]
    name: str
    version: str
    author: str
    def __init__(self, protocol_version: _Optional[_Union[ProtocolVersion, str]] = ..., games: _Optional[_Iterable[_Union[Game, str]]] = ..., name: _Optional[str] = ..., version: _Optional[str] = ..., author: _Optional[str] = ...) -> None: ...

class SeatState(_message.Message):
    __slots__ = ("seat", "lives", "floating", "in_game", "in_hand")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    LIVES_FIELD_NUMBER: _ClassVar[int]
    FLOATING_FIELD_NUMBER: _ClassVar[int]
    IN_GAME_FIELD_NUMBER: _ClassVar[int]
    IN_HAND_FIELD_NUMBER: _ClassVar[int]
    seat: int
    lives: int
    floating: bool
    in_game: bool
    in_hand: bool
    def __init__(self, seat: _Optional[int] = ..., lives: _Optional[int] = ..., floating: _Optional[bool] = ..., in_game: _Optional[bool] = ..., in_hand: _Optional[bool] = ...) -> None: ...

class StopTheBusView(_message.Message):
    __slots__ = ("discard_top", "stock_count", "discard_count", "drawn_card", "took_discard")
    DISCARD_TOP_FIELD_NUMBER: _ClassVar[int]
    STOCK_COUNT_FIELD_NUMBER: _ClassVar[int]
    DISCARD_COUNT_FIELD_NUMBER: _ClassVar[int]
    DRAWN_CARD_FIELD_NUMBER: _ClassVar[int]
    TOOK_DISCARD_FIELD_NUMBER: _ClassVar[int]
    discard_top: Card
    stock_count: int
    discard_count: int
    drawn_card: Card
    took_discard: bool
    def __init__(self, discard_top: _Optional[_Union[Card, _Mapping]] = ..., stock_count: _Optional[int] = ..., discard_count: _Optional[int] = ..., drawn_card: _Optional[_Union[Card, _Mapping]] = ..., took_discard: _Optional[bool] = ...) -> None: ...

class CentreSlot(_message.Message):
    __slots__ = ("slot", "face_up", "card")
    SLOT_FIELD_NUMBER: _ClassVar[int]
    FACE_UP_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    slot: int
    face_up: bool
    card: Card
    def __init__(self, slot: _Optional[int] = ..., face_up: _Optional[bool] = ..., card: _Optional[_Union[Card, _Mapping]] = ...) -> None: ...

class BastardBragView(_message.Message):
    __slots__ = ("centre",)
    CENTRE_FIELD_NUMBER: _ClassVar[int]
    centre: _containers.RepeatedCompositeFieldContainer[CentreSlot]
    def __init__(self, centre: _Optional[_Iterable[_Union[CentreSlot, _Mapping]]] = ...) -> None: ...

class Observation(_message.Message):
    __slots__ = ("game", "seat", "num_players", "hand_number", "dealer", "phase", "hand", "seats", "ender", "turns_this_hand", "turn_limit", "stop_the_bus", "bastard_brag")
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    ENDER_FIELD_NUMBER: _ClassVar[int]
    TURNS_THIS_HAND_FIELD_NUMBER: _ClassVar[int]
    TURN_LIMIT_FIELD_NUMBER: _ClassVar[int]
    STOP_THE_BUS_FIELD_NUMBER: _ClassVar[int]
    BASTARD_BRAG_FIELD_NUMBER: _ClassVar[int]
    game: Game
    seat: int
    num_players: int
    hand_number: int
    dealer: int
    phase: Phase
    hand: _containers.RepeatedCompositeFieldContainer[Card]
    seats: _containers.RepeatedCompositeFieldContainer[SeatState]
    ender: int
    turns_this_hand: int
    turn_limit: int
    stop_the_bus: StopTheBusView
    bastard_brag: BastardBragView
    def __init__(self, game: _Optional[_Union[Game, str]] = ..., seat: _Optional[int] = ..., num_players: _Optional[int] = ..., hand_number: _Optional[int] = ..., dealer: _Optional[int] = ..., phase: _Optional[_Union[Phase, str]] = ..., hand: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., seats: _Optional[_Iterable[_Union[SeatState, _Mapping]]] = ..., ender: _Optional[int] = ..., turns_this_hand: _Optional[int] = ..., turn_limit: _Optional[int] = ..., stop_the_bus: _Optional[_Union[StopTheBusView, _Mapping]] = ..., bastard_brag: _Optional[_Union[BastardBragView, _Mapping]] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("kind", "hand_number", "seat", "card", "taken", "slot", "count")
    KIND_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    TAKEN_FIELD_NUMBER: _ClassVar[int]
    SLOT_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    kind: EventKind
    hand_number: int
    seat: int
    card: Card
    taken: Card
    slot: int
    count: int
    def __init__(self, kind: _Optional[_Union[EventKind, str]] = ..., hand_number: _Optional[int] = ..., seat: _Optional[int] = ..., card: _Optional[_Union[Card, _Mapping]] = ..., taken: _Optional[_Union[Card, _Mapping]] = ..., slot: _Optional[int] = ..., count: _Optional[int] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("game_id", "hand_number", "decision_number", "seat", "observation", "events", "legal_actions", "move_time_ms", "time_bank_ms", "default_action")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DECISION_NUMBER_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    MOVE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_ACTION_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    hand_number: int
    decision_number: int
    seat: int
    observation: Observation
    events: _containers.RepeatedCompositeFieldContainer[Event]
    legal_actions: _containers.RepeatedCompositeFieldContainer[Action]
    move_time_ms: int
    time_bank_ms: int
    default_action: Action
    def __init__(self, game_id: _Optional[str] = ..., hand_number: _Optional[int] = ..., decision_number: _Optional[int] = ..., seat: _Optional[int] = ..., observation: _Optional[_Union[Observation, _Mapping]] = ..., events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., legal_actions: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., move_time_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., default_action: _Optional[_Union[Action, _Mapping]] = ...) -> None: ...

class DecisionReply(_message.Message):
    __slots__ = ("decision_number", "action")
    DECISION_NUMBER_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    decision_number: int
    action: Action
    def __init__(self, decision_number: _Optional[int] = ..., action: _Optional[_Union[Action, _Mapping]] = ...) -> None: ...

class GameStarted(_message.Message):
    __slots__ = ("game_id", "game", "num_players", "seat", "players", "time_limits", "turn_limit")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    TIME_LIMITS_FIELD_NUMBER: _ClassVar[int]
    TURN_LIMIT_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    game: Game
    num_players: int
    seat: int
    players: _containers.RepeatedScalarFieldContainer[str]
    time_limits: TimeLimits
    turn_limit: int
    def __init__(self, game_id: _Optional[str] = ..., game: _Optional[_Union[Game, str]] = ..., num_players: _Optional[int] = ..., seat: _Optional[int] = ..., players: _Optional[_Iterable[str]] = ..., time_limits: _Optional[_Union[TimeLimits, _Mapping]] = ..., turn_limit: _Optional[int] = ...) -> None: ...

class RevealedHand(_message.Message):
    __slots__ = ("seat", "cards", "rank_name")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    RANK_NAME_FIELD_NUMBER: _ClassVar[int]
    seat: int
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    rank_name: str
    def __init__(self, seat: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., rank_name: _Optional[str] = ...) -> None: ...

class HandResult(_message.Message):
    __slots__ = ("game_id", "hand_number", "dealer", "ended_by", "hands", "loser", "seats", "eliminated")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    ENDED_BY_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    LOSER_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    ELIMINATED_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    hand_number: int
    dealer: int
    ended_by: str
    hands: _containers.RepeatedCompositeFieldContainer[RevealedHand]
    loser: int
    seats: _containers.RepeatedCompositeFieldContainer[SeatState]
    eliminated: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, game_id: _Optional[str] = ..., hand_number: _Optional[int] = ..., dealer: _Optional[int] = ..., ended_by: _Optional[str] = ..., hands: _Optional[_Iterable[_Union[RevealedHand, _Mapping]]] = ..., loser: _Optional[int] = ..., seats: _Optional[_Iterable[_Union[SeatState, _Mapping]]] = ..., eliminated: _Optional[_Iterable[int]] = ...) -> None: ...

class GameOver(_message.Message):
    __slots__ = ("game_id", "placements", "hands_played")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    PLACEMENTS_FIELD_NUMBER: _ClassVar[int]
    HANDS_PLAYED_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    placements: _containers.RepeatedScalarFieldContainer[int]
    hands_played: int
    def __init__(self, game_id: _Optional[str] = ..., placements: _Optional[_Iterable[int]] = ..., hands_played: _Optional[int] = ...) -> None: ...

class Notification(_message.Message):
    __slots__ = ("game_started", "hand_result", "game_over")
    GAME_STARTED_FIELD_NUMBER: _ClassVar[int]
    HAND_RESULT_FIELD_NUMBER: _ClassVar[int]
    GAME_OVER_FIELD_NUMBER: _ClassVar[int]
    game_started: GameStarted
    hand_result: HandResult
    game_over: GameOver
    def __init__(self, game_started: _Optional[_Union[GameStarted, _Mapping]] = ..., hand_result: _Optional[_Union[HandResult, _Mapping]] = ..., game_over: _Optional[_Union[GameOver, _Mapping]] = ...) -> None: ...

class NotifyReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
