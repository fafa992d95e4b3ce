from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Game(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GAME_UNSPECIFIED: _ClassVar[Game]
    GAME_STOP_THE_BUS: _ClassVar[Game]
    GAME_BASTARD_BRAG: _ClassVar[Game]

class Suit(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SUIT_UNSPECIFIED: _ClassVar[Suit]
    SUIT_CLUBS: _ClassVar[Suit]
    SUIT_DIAMONDS: _ClassVar[Suit]
    SUIT_HEARTS: _ClassVar[Suit]
    SUIT_SPADES: _ClassVar[Suit]

class ActionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACTION_KIND_UNSPECIFIED: _ClassVar[ActionKind]
    ACTION_KIND_DRAW: _ClassVar[ActionKind]
    ACTION_KIND_TAKE: _ClassVar[ActionKind]
    ACTION_KIND_DISCARD: _ClassVar[ActionKind]
    ACTION_KIND_STOP: _ClassVar[ActionKind]
    ACTION_KIND_PASS: _ClassVar[ActionKind]
    ACTION_KIND_EXCHANGE: _ClassVar[ActionKind]
    ACTION_KIND_EXCHANGE_ALL: _ClassVar[ActionKind]
    ACTION_KIND_KNOCK: _ClassVar[ActionKind]

class FaultPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FAULT_POLICY_UNSPECIFIED: _ClassVar[FaultPolicy]
    FAULT_POLICY_FORFEIT: _ClassVar[FaultPolicy]
    FAULT_POLICY_DEFAULT_ACTION: _ClassVar[FaultPolicy]

class Phase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PHASE_UNSPECIFIED: _ClassVar[Phase]
    PHASE_NORMAL: _ClassVar[Phase]
    PHASE_FINAL: _ClassVar[Phase]
    PHASE_OVER: _ClassVar[Phase]

class EventKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EVENT_KIND_UNSPECIFIED: _ClassVar[EventKind]
    EVENT_KIND_DEAL: _ClassVar[EventKind]
    EVENT_KIND_DRAW: _ClassVar[EventKind]
    EVENT_KIND_TAKE: _ClassVar[EventKind]
    EVENT_KIND_DISCARD: _ClassVar[EventKind]
    EVENT_KIND_STOP: _ClassVar[EventKind]
    EVENT_KIND_PASS: _ClassVar[EventKind]
    EVENT_KIND_RECYCLE: _ClassVar[EventKind]
    EVENT_KIND_EXCHANGE: _ClassVar[EventKind]
    EVENT_KIND_EXCHANGE_ALL: _ClassVar[EventKind]
    EVENT_KIND_KNOCK: _ClassVar[EventKind]
    EVENT_KIND_STOCK_EXHAUSTED: _ClassVar[EventKind]
    EVENT_KIND_TURN_LIMIT: _ClassVar[EventKind]
    EVENT_KIND_SHOWDOWN: _ClassVar[EventKind]
    EVENT_KIND_ELIMINATED: _ClassVar[EventKind]
    EVENT_KIND_FORFEIT: _ClassVar[EventKind]
    EVENT_KIND_GAME_OVER: _ClassVar[EventKind]

class HandEnding(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    HAND_ENDING_UNSPECIFIED: _ClassVar[HandEnding]
    HAND_ENDING_STOP: _ClassVar[HandEnding]
    HAND_ENDING_KNOCK: _ClassVar[HandEnding]
    HAND_ENDING_STOCK_EXHAUSTED: _ClassVar[HandEnding]
    HAND_ENDING_TURN_LIMIT: _ClassVar[HandEnding]

class FaultKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FAULT_KIND_UNSPECIFIED: _ClassVar[FaultKind]
    FAULT_KIND_TIMEOUT: _ClassVar[FaultKind]
    FAULT_KIND_CRASH: _ClassVar[FaultKind]
    FAULT_KIND_MALFORMED: _ClassVar[FaultKind]
    FAULT_KIND_ILLEGAL: _ClassVar[FaultKind]
    FAULT_KIND_STALE: _ClassVar[FaultKind]
    FAULT_KIND_STARTUP: _ClassVar[FaultKind]
    FAULT_KIND_HANDSHAKE: _ClassVar[FaultKind]
GAME_UNSPECIFIED: Game
GAME_STOP_THE_BUS: Game
GAME_BASTARD_BRAG: Game
SUIT_UNSPECIFIED: Suit
SUIT_CLUBS: Suit
SUIT_DIAMONDS: Suit
SUIT_HEARTS: Suit
SUIT_SPADES: Suit
ACTION_KIND_UNSPECIFIED: ActionKind
ACTION_KIND_DRAW: ActionKind
ACTION_KIND_TAKE: ActionKind
ACTION_KIND_DISCARD: ActionKind
ACTION_KIND_STOP: ActionKind
ACTION_KIND_PASS: ActionKind
ACTION_KIND_EXCHANGE: ActionKind
ACTION_KIND_EXCHANGE_ALL: ActionKind
ACTION_KIND_KNOCK: ActionKind
FAULT_POLICY_UNSPECIFIED: FaultPolicy
FAULT_POLICY_FORFEIT: FaultPolicy
FAULT_POLICY_DEFAULT_ACTION: FaultPolicy
PHASE_UNSPECIFIED: Phase
PHASE_NORMAL: Phase
PHASE_FINAL: Phase
PHASE_OVER: Phase
EVENT_KIND_UNSPECIFIED: EventKind
EVENT_KIND_DEAL: EventKind
EVENT_KIND_DRAW: EventKind
EVENT_KIND_TAKE: EventKind
EVENT_KIND_DISCARD: EventKind
EVENT_KIND_STOP: EventKind
EVENT_KIND_PASS: EventKind
EVENT_KIND_RECYCLE: EventKind
EVENT_KIND_EXCHANGE: EventKind
EVENT_KIND_EXCHANGE_ALL: EventKind
EVENT_KIND_KNOCK: EventKind
EVENT_KIND_STOCK_EXHAUSTED: EventKind
EVENT_KIND_TURN_LIMIT: EventKind
EVENT_KIND_SHOWDOWN: EventKind
EVENT_KIND_ELIMINATED: EventKind
EVENT_KIND_FORFEIT: EventKind
EVENT_KIND_GAME_OVER: EventKind
HAND_ENDING_UNSPECIFIED: HandEnding
HAND_ENDING_STOP: HandEnding
HAND_ENDING_KNOCK: HandEnding
HAND_ENDING_STOCK_EXHAUSTED: HandEnding
HAND_ENDING_TURN_LIMIT: HandEnding
FAULT_KIND_UNSPECIFIED: FaultKind
FAULT_KIND_TIMEOUT: FaultKind
FAULT_KIND_CRASH: FaultKind
FAULT_KIND_MALFORMED: FaultKind
FAULT_KIND_ILLEGAL: FaultKind
FAULT_KIND_STALE: FaultKind
FAULT_KIND_STARTUP: FaultKind
FAULT_KIND_HANDSHAKE: FaultKind

class PlayRequest(_message.Message):
    __slots__ = ("sequence", "handshake", "game_start", "decision_request", "fault_notice", "game_end")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    HANDSHAKE_FIELD_NUMBER: _ClassVar[int]
    GAME_START_FIELD_NUMBER: _ClassVar[int]
    DECISION_REQUEST_FIELD_NUMBER: _ClassVar[int]
    FAULT_NOTICE_FIELD_NUMBER: _ClassVar[int]
    GAME_END_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    handshake: Handshake
    game_start: GameStart
    decision_request: DecisionRequest
    fault_notice: FaultNotice
    game_end: GameEnd
    def __init__(self, sequence: _Optional[int] = ..., handshake: _Optional[_Union[Handshake, _Mapping]] = ..., game_start: _Optional[_Union[GameStart, _Mapping]] = ..., decision_request: _Optional[_Union[DecisionRequest, _Mapping]] = ..., fault_notice: _Optional[_Union[FaultNotice, _Mapping]] = ..., game_end: _Optional[_Union[GameEnd, _Mapping]] = ...) -> None: ...

class PlayResponse(_message.Message):
    __slots__ = ("handshake", "decision")
    HANDSHAKE_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    handshake: HandshakeResponse
    decision: Decision
    def __init__(self, handshake: _Optional[_Union[HandshakeResponse, _Mapping]] = ..., decision: _Optional[_Union[Decision, _Mapping]] = ...) -> None: ...

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
    __slots__ = ("move_time_ms", "time_bank_ms", "grace_ms")
    MOVE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    move_time_ms: int
    time_bank_ms: int
    grace_ms: int
    def __init__(self, move_time_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., grace_ms: _Optional[int] = ...) -> None: ...

class Handshake(_message.Message):
    __slots__ = ("protocol_versions", "referee_version", "game", "num_players", "time_limits", "turn_limit")
    PROTOCOL_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    REFEREE_VERSION_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    TIME_LIMITS_FIELD_NUMBER: _ClassVar[int]
    TURN_LIMIT_FIELD_NUMBER: _ClassVar[int]
    protocol_versions: _containers.RepeatedScalarFieldContainer[int]
    referee_version: str
    game: Game
    num_players: int
    time_limits: TimeLimits
    turn_limit: int
    def __init__(self, protocol_versions: _Optional[_Iterable[int]] = ..., referee_version: _Optional[str] = ..., game: _Optional[_Union[Game, str]] = ..., num_players: _Optional[int] = ..., time_limits: _Optional[_Union[TimeLimits, _Mapping]] = ..., turn_limit: _Optional[int] = ...) -> None: ...

class HandshakeResponse(_message.Message):
    __slots__ = ("protocol_versions", "games", "name", "version", "author")
    PROTOCOL_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    protocol_versions: _containers.RepeatedScalarFieldContainer[int]
    games: _containers.RepeatedScalarFieldContainer[Game]
    name: str
    version: str
    author: str
    def __init__(self, protocol_versions: _Optional[_Iterable[int]] = ..., games: _Optional[_Iterable[_Union[Game, str]]] = ..., name: _Optional[str] = ..., version: _Optional[str] = ..., author: _Optional[str] = ...) -> None: ...

class GameStart(_message.Message):
    __slots__ = ("game_id", "game", "num_players", "seat", "players", "time_limits", "turn_limit", "random_seed", "fault_policy", "max_faults")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    TIME_LIMITS_FIELD_NUMBER: _ClassVar[int]
    TURN_LIMIT_FIELD_NUMBER: _ClassVar[int]
    RANDOM_SEED_FIELD_NUMBER: _ClassVar[int]
    FAULT_POLICY_FIELD_NUMBER: _ClassVar[int]
    MAX_FAULTS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    game: Game
    num_players: int
    seat: int
    players: _containers.RepeatedScalarFieldContainer[str]
    time_limits: TimeLimits
    turn_limit: int
    random_seed: int
    fault_policy: FaultPolicy
    max_faults: int
    def __init__(self, game_id: _Optional[str] = ..., game: _Optional[_Union[Game, str]] = ..., num_players: _Optional[int] = ..., seat: _Optional[int] = ..., players: _Optional[_Iterable[str]] = ..., time_limits: _Optional[_Union[TimeLimits, _Mapping]] = ..., turn_limit: _Optional[int] = ..., random_seed: _Optional[int] = ..., fault_policy: _Optional[_Union[FaultPolicy, str]] = ..., max_faults: _Optional[int] = ...) -> None: ...

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

class RevealedHand(_message.Message):
    __slots__ = ("seat", "cards", "rank_name")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    RANK_NAME_FIELD_NUMBER: _ClassVar[int]
    seat: int
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    rank_name: str
    def __init__(self, seat: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., rank_name: _Optional[str] = ...) -> None: ...

class Showdown(_message.Message):
    __slots__ = ("ending", "hands", "seats")
    ENDING_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    ending: HandEnding
    hands: _containers.RepeatedCompositeFieldContainer[RevealedHand]
    seats: _containers.RepeatedCompositeFieldContainer[SeatState]
    def __init__(self, ending: _Optional[_Union[HandEnding, str]] = ..., hands: _Optional[_Iterable[_Union[RevealedHand, _Mapping]]] = ..., seats: _Optional[_Iterable[_Union[SeatState, _Mapping]]] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("sequence", "hand_number", "kind", "seat", "card", "taken", "slot", "count", "showdown")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    TAKEN_FIELD_NUMBER: _ClassVar[int]
    SLOT_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    SHOWDOWN_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    hand_number: int
    kind: EventKind
    seat: int
    card: Card
    taken: Card
    slot: int
    count: int
    showdown: Showdown
    def __init__(self, sequence: _Optional[int] = ..., hand_number: _Optional[int] = ..., kind: _Optional[_Union[EventKind, str]] = ..., seat: _Optional[int] = ..., card: _Optional[_Union[Card, _Mapping]] = ..., taken: _Optional[_Union[Card, _Mapping]] = ..., slot: _Optional[int] = ..., count: _Optional[int] = ..., showdown: _Optional[_Union[Showdown, _Mapping]] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("game_id", "decision_number", "seat", "observation", "events", "legal_actions", "move_time_ms", "time_bank_ms", "default_action", "last_charged_ms")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    DECISION_NUMBER_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    MOVE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_ACTION_FIELD_NUMBER: _ClassVar[int]
    LAST_CHARGED_MS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    decision_number: int
    seat: int
    observation: Observation
    events: _containers.RepeatedCompositeFieldContainer[Event]
    legal_actions: _containers.RepeatedCompositeFieldContainer[Action]
    move_time_ms: int
    time_bank_ms: int
    default_action: Action
    last_charged_ms: int
    def __init__(self, game_id: _Optional[str] = ..., decision_number: _Optional[int] = ..., seat: _Optional[int] = ..., observation: _Optional[_Union[Observation, _Mapping]] = ..., events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., legal_actions: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., move_time_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., default_action: _Optional[_Union[Action, _Mapping]] = ..., last_charged_ms: _Optional[int] = ...) -> None: ...

class Decision(_message.Message):
    __slots__ = ("decision_number", "action", "error", "note")
    DECISION_NUMBER_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    decision_number: int
    action: Action
    error: str
    note: str
    def __init__(self, decision_number: _Optional[int] = ..., action: _Optional[_Union[Action, _Mapping]] = ..., error: _Optional[str] = ..., note: _Optional[str] = ...) -> None: ...

class FaultNotice(_message.Message):
    __slots__ = ("game_id", "decision_number", "kind", "detail", "replaced_by", "forfeited", "faults_this_game")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    DECISION_NUMBER_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    REPLACED_BY_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    FAULTS_THIS_GAME_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    decision_number: int
    kind: FaultKind
    detail: str
    replaced_by: Action
    forfeited: bool
    faults_this_game: int
    def __init__(self, game_id: _Optional[str] = ..., decision_number: _Optional[int] = ..., kind: _Optional[_Union[FaultKind, str]] = ..., detail: _Optional[str] = ..., replaced_by: _Optional[_Union[Action, _Mapping]] = ..., forfeited: _Optional[bool] = ..., faults_this_game: _Optional[int] = ...) -> None: ...

class GameEnd(_message.Message):
    __slots__ = ("game_id", "placements", "hands_played", "events", "forfeited", "is_void")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    PLACEMENTS_FIELD_NUMBER: _ClassVar[int]
    HANDS_PLAYED_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    IS_VOID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    placements: _containers.RepeatedScalarFieldContainer[int]
    hands_played: int
    events: _containers.RepeatedCompositeFieldContainer[Event]
    forfeited: _containers.RepeatedScalarFieldContainer[int]
    is_void: bool
    def __init__(self, game_id: _Optional[str] = ..., placements: _Optional[_Iterable[int]] = ..., hands_played: _Optional[int] = ..., events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., forfeited: _Optional[_Iterable[int]] = ..., is_void: _Optional[bool] = ...) -> None: ...
